/* engine.c — the event loop: take the earliest of three ordered sources (the events due now in
 * a FIFO, the heap of later events, the earliest timer), hand it to its component; pass what the
 * components report on to the observer. All three number their events from the queue's one
 * insertion counter, so the order is (time, scheduling order) across them. An event a handler
 * passes on as its last act (sim_engine_pass_on) skips all three when it is the next event anyway:
 * the engine calls its target at once, inside the passing handler's call. */
#include "sim/core/engine.h"

#include "sim/base/err.h"

#include <stdlib.h>

typedef struct slot {
    const sim_component_ops *ops;
    void *self;
} slot;

struct sim_engine {
    sim_engine_clock clock;            /* first: sim_engine_now reads it (engine.h) */
    sim_queue q;                       /* events after now */
    sim_event *due;                    /* ring of events scheduled for now, in scheduling order */
    size_t due_head, due_len, due_cap; /* due_cap: a power of two */
    /* A timer is its pending event, armed unless its time is INT64_MAX. */
    sim_event *timers;
    int n_timers, cap_timers;
    int first_timer; /* the armed timer that fires first; -1 = none */
    uint64_t armed;  /* bit id % 64 set while timer id is armed: exact when n_timers <= 64 */
    slot *comps;
    uint32_t n_comps, cap_comps;
    uint64_t events;
    uint64_t end;   /* the running slice's last event count; 0 outside sim_engine_run_some */
    int pass_depth; /* handlers entered through sim_engine_pass_on and not yet returned */
    bool stopped;
    int error;
    const sim_observer_ops *obs;
    void *obs_ctx;
    bool observed; /* obs != NULL, read by components through sim_engine_observed */
};

sim_engine *sim_engine_create(void)
{
    sim_engine *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    sim_queue_init(&e->q);
    e->first_timer = -1;
    return e;
}

void sim_engine_destroy(sim_engine *e)
{
    if (!e) return;
    sim_queue_fini(&e->q);
    free(e->due);
    free(e->timers);
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

/* Doubles the FIFO's ring (unwrapped into the new array). Out of line, as the queue's growth is
 * (queue.c): it runs a few times per run, and inlined it cost every caller that schedules an
 * event more registers to save. */
__attribute__((noinline)) static int grow_due(sim_engine *e)
{
    size_t cap = e->due_cap ? 2 * e->due_cap : 64;
    sim_event *r = malloc(cap * sizeof *r);
    if (!r) return SIM_ENOMEM;
    for (size_t i = 0; i < e->due_len; i++)
        r[i] = e->due[(e->due_head + i) & (e->due_cap - 1)];
    free(e->due);
    e->due = r;
    e->due_cap = cap;
    e->due_head = 0;
    return SIM_OK;
}

/* Appends an event due now to the FIFO. */
static int push_due(sim_engine *e, uint32_t target, uint32_t kind, uint64_t a)
{
    if (e->due_len == e->due_cap) {
        int rc = grow_due(e);
        if (rc) return rc;
    }
    e->due[(e->due_head + e->due_len++) & (e->due_cap - 1)] =
        (sim_event){e->clock.now_ns, e->q.next_seq++, target, kind, a};
    return SIM_OK;
}

int sim_engine_at(sim_engine *e, int64_t t_ns, uint32_t target, uint32_t kind, uint64_t a)
{
    SIM_ASSERT(t_ns >= e->clock.now_ns);
    SIM_ASSERT(target < e->n_comps);
    int rc = t_ns == e->clock.now_ns ? push_due(e, target, kind, a)
                                     : sim_queue_push(&e->q, t_ns, target, kind, a);
    if (rc) sim_engine_fail(e, rc);
    return rc;
}

int sim_engine_after(sim_engine *e, int64_t delay_ns, uint32_t target, uint32_t kind, uint64_t a)
{
    SIM_ASSERT(delay_ns >= 0);
    return sim_engine_at(e, e->clock.now_ns + delay_ns, target, kind, a);
}

int sim_engine_timer_add(sim_engine *e, uint32_t target, uint32_t kind)
{
    SIM_ASSERT(target < e->n_comps);
    if (e->n_timers == e->cap_timers) {
        int cap = e->cap_timers ? 2 * e->cap_timers : 8;
        sim_event *t = realloc(e->timers, (size_t)cap * sizeof *t);
        if (!t) return SIM_ENOMEM;
        e->timers = t;
        e->cap_timers = cap;
    }
    e->timers[e->n_timers] = (sim_event){.t_ns = INT64_MAX, .target = target, .kind = kind};
    return e->n_timers++;
}

/* Finds the armed timer that fires first (there are a few per GPU). Usually at most two are
 * armed (99 times in 100 in bench_sweep, with 6 timers): the armed set names them, and one
 * comparison decides. Otherwise a scan, in which a disarmed timer's time, INT64_MAX, needs no
 * flag: the first pass finds the earliest time and the first timer with it, by selects rather
 * than branches taken at random; a later timer at that time fires first if it was set sooner,
 * which the second pass, one comparison per timer that is almost never true, looks for. */
static void find_first_timer(sim_engine *e)
{
    uint64_t armed = e->armed, rest = armed & (armed - 1);
    if (e->n_timers <= 64 && !(rest & (rest - 1))) {
        int first = armed ? __builtin_ctzll(armed) : -1;
        if (rest) {
            int other = __builtin_ctzll(rest);
            if (sim_event_before(&e->timers[other], &e->timers[first])) first = other;
        }
        e->first_timer = first;
        return;
    }
    int first = -1;
    int64_t first_t = INT64_MAX;
    for (int i = 0; i < e->n_timers; i++) {
        int64_t t = e->timers[i].t_ns;
        bool earlier = t < first_t;
        first = earlier ? i : first;
        first_t = earlier ? t : first_t;
    }
    if (first >= 0) {
        uint64_t first_seq = e->timers[first].seq;
        for (int i = first + 1; i < e->n_timers; i++) {
            const sim_event *ev = &e->timers[i];
            if (ev->t_ns == first_t && ev->seq < first_seq) {
                first = i;
                first_seq = ev->seq;
            }
        }
    }
    e->first_timer = first;
}

void sim_engine_timer_set(sim_engine *e, int id, int64_t t_ns)
{
    SIM_ASSERT(t_ns >= e->clock.now_ns && id >= 0 && id < e->n_timers);
    sim_event *t = &e->timers[id];
    bool was_first = id == e->first_timer; /* then it is armed */
    bool earlier = t_ns < t->t_ns;         /* then the first stays first */
    t->t_ns = t_ns;
    t->seq = e->q.next_seq++;
    uint64_t bit = UINT64_C(1) << (id & 63);
    e->armed = t_ns == INT64_MAX ? e->armed & ~bit : e->armed | bit; /* INT64_MAX: disarmed */
    if (was_first) {
        if (!earlier) find_first_timer(e); /* it may have moved behind another */
    } else if (e->first_timer < 0 || sim_event_before(t, &e->timers[e->first_timer]))
        e->first_timer = id;
}

/* Events handed on directly nest inside one another's calls; past this depth they take the FIFO,
 * which gives the same order once the stack unwinds. */
#define PASS_DEPTH_MAX 8

/* True when an event due now sits in a source: the FIFO, the heap (scheduled before now came) or a
 * timer. An event passed on now would come after it. */
static bool other_due_now(const sim_engine *e)
{
    return e->due_len || (e->q.n && e->q.heap[0].t_ns == e->clock.now_ns) ||
           (e->first_timer >= 0 && e->timers[e->first_timer].t_ns == e->clock.now_ns);
}

static void dispatch(sim_engine *e, const sim_event *ev)
{
    e->events++;
    const slot *s = &e->comps[ev->target];
    s->ops->handle(e, s->self, ev);
}

/* sim_engine_pass_on's other way: the FIFO. Out of line, so that the usual way, which only
 * calls a handler, saves one register (inlined, this made it save six). */
__attribute__((noinline)) static int pass_through_fifo(sim_engine *e, uint32_t target,
                                                       uint32_t kind, uint64_t a)
{
    return sim_engine_at(e, e->clock.now_ns, target, kind, a);
}

int sim_engine_pass_on(sim_engine *e, uint32_t target, uint32_t kind, uint64_t a)
{
    SIM_ASSERT(target < e->n_comps);
    if (e->stopped || e->events >= e->end || e->pass_depth >= PASS_DEPTH_MAX || other_due_now(e))
        return pass_through_fifo(e, target, kind, a);
    /* It would be the next event the loop takes: it takes its number and runs now. */
    sim_event ev = {e->clock.now_ns, e->q.next_seq++, target, kind, a};
    e->pass_depth++;
    dispatch(e, &ev);
    e->pass_depth--;
    return SIM_OK;
}

/* Removes the earliest event of the three sources into *ev; false when all are empty. */
static bool take(sim_engine *e, sim_event *ev)
{
    const sim_event *due = e->due_len ? &e->due[e->due_head] : NULL;
    const sim_event *heap = e->q.n ? &e->q.heap[0] : NULL;
    sim_event *t = e->first_timer >= 0 ? &e->timers[e->first_timer] : NULL;
    if (heap && due && sim_event_before(due, heap)) heap = NULL;
    if (t && ((heap && sim_event_before(heap, t)) || (due && sim_event_before(due, t)))) t = NULL;
    if (t) {
        /* Field by field: sim_engine_timer_set wrote the time and the number as two stores,
         * often just before, and one wide load of both would wait for them to reach the cache. */
        ev->t_ns = t->t_ns;
        ev->seq = t->seq;
        ev->target = t->target;
        ev->kind = t->kind;
        ev->a = t->a;
        t->t_ns = INT64_MAX; /* disarmed */
        e->armed &= ~(UINT64_C(1) << (e->first_timer & 63));
        find_first_timer(e);
        return true;
    }
    if (heap) return sim_queue_pop(&e->q, ev) == 0;
    if (!due) return false;
    *ev = *due;
    e->due_head = (e->due_head + 1) & (e->due_cap - 1);
    e->due_len--;
    return true;
}

int sim_engine_run_some(sim_engine *e, uint64_t max_events, bool *finished)
{
    sim_event ev;
    e->end = max_events > UINT64_MAX - e->events ? UINT64_MAX : e->events + max_events;
    *finished = false;
    while (e->events < e->end) {
        if (e->stopped || !take(e, &ev)) {
            *finished = true;
            break;
        }
        e->clock.now_ns = ev.t_ns;
        dispatch(e, &ev);
    }
    e->end = 0;
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
    if (e->obs) e->obs->observe(e->obs_ctx, e->clock.now_ns, o);
}

uint64_t sim_engine_events(const sim_engine *e)
{
    return e->events;
}
