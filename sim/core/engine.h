/* engine.h — the discrete-event engine: an int64 nanosecond clock, the event queue and a table of
 * components. A component kind is one const sim_component_ops; an instance is (ops, state).
 * Components talk by scheduling events addressed to each other, and report what they do to at
 * most one observer (a recorder such as the timeline), which changes nothing in the run. No
 * global state: several engines can run side by side (one per run).
 * Events fire in (time, scheduling order). Events due now skip the heap (a FIFO), and a timer
 * (one pending event per owner, movable) replaces the cancel-by-generation pattern, so neither
 * relays nor superseded completions cost heap work; the order is the same as one heap's. A
 * completion handed on as a handler's last act runs at once when it is the next event anyway. */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include "sim/core/queue.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct sim_engine sim_engine;

typedef struct sim_component_ops {
    const char *name;
    /* Handles one event addressed to this component. */
    void (*handle)(sim_engine *e, void *self, const sim_event *ev);
} sim_component_ops;

/* What a component reports: defined by the layer that reports it (sim/core/pipeline.h); the
 * engine only passes it on. */
typedef struct sim_observation sim_observation;

typedef struct sim_observer_ops {
    const char *name;
    /* Sees one observation at now_ns; `o` is borrowed for the call. Must not schedule events. */
    void (*observe)(void *ctx, int64_t now_ns, const sim_observation *o);
} sim_observer_ops;

/* Creates an engine; NULL when out of memory. */
sim_engine *sim_engine_create(void);
void sim_engine_destroy(sim_engine *e);

/* Registers a component instance; returns its id (>= 0) or SIM_ENOMEM. `self` is borrowed. */
int sim_engine_add(sim_engine *e, const sim_component_ops *ops, void *self);

/* Schedules an event at absolute time t_ns (>= now). Returns 0 or SIM_ENOMEM. */
int sim_engine_at(sim_engine *e, int64_t t_ns, uint32_t target, uint32_t kind, uint64_t a);
/* Schedules an event after delay_ns (>= 0). */
int sim_engine_after(sim_engine *e, int64_t delay_ns, uint32_t target, uint32_t kind, uint64_t a);

/* Schedules an event due now, as the calling handler's last act: the handler must return right
 * after the call. The order is sim_engine_after(e, 0, ...)'s; when that makes it the next event
 * (nothing else due now), the engine saves the queue and calls its target at once, before this
 * returns. Use it where a component hands a result on (a completion to its owner). Returns 0 or
 * SIM_ENOMEM. */
int sim_engine_pass_on(sim_engine *e, uint32_t target, uint32_t kind, uint64_t a);

/* The clock is the one field of the engine in sight: the first member of struct sim_engine (a
 * pointer to a struct may be read as a pointer to its first member), so that the components,
 * which read the time on every event, pay a load rather than a call. */
typedef struct sim_engine_clock {
    int64_t now_ns;
} sim_engine_clock;

static inline int64_t sim_engine_now(const sim_engine *e)
{
    return ((const sim_engine_clock *)(const void *)e)->now_ns;
}

/* A timer: at most one pending event (target, kind, payload 0) that its owner may move instead
 * of scheduling a new one, which would leave the old one to be skipped. Returns the timer's id
 * (>= 0) or SIM_ENOMEM. */
int sim_engine_timer_add(sim_engine *e, uint32_t target, uint32_t kind);
/* Sets timer `timer` to fire at t_ns (>= now), replacing the pending time if it has one. It then
 * fires as an event scheduled by this call would: after the events scheduled before it for the
 * same time. A timer fires once per set. */
void sim_engine_timer_set(sim_engine *e, int timer, int64_t t_ns);

/* Runs until the queue is empty or sim_engine_stop is called. Returns 0, or the first error a
 * component reported through sim_engine_fail. */
int sim_engine_run(sim_engine *e);
/* Like sim_engine_run, but returns after at most max_events more events; *finished is set when
 * the run is over (no event left, stopped or failed). Running in slices gives the same results
 * as one sim_engine_run: the caller may look around between slices (progress reports). */
int sim_engine_run_some(sim_engine *e, uint64_t max_events, bool *finished);
void sim_engine_stop(sim_engine *e);
/* Records an error (the first one wins) and stops the run. */
void sim_engine_fail(sim_engine *e, int code);

/* Sets the observer (ops NULL = none); `ctx` is borrowed for the engine's life. */
void sim_engine_set_observer(sim_engine *e, const sim_observer_ops *ops, void *ctx);
/* The engine's "an observer is set" flag, valid for the engine's life: components keep the
 * pointer and test it before they build an observation, so that a run without an observer pays
 * a load, not a call, on the paths that run per kernel. */
const bool *sim_engine_observed(const sim_engine *e);
/* Hands `o` to the observer; does nothing when there is none. */
void sim_engine_observe(const sim_engine *e, const sim_observation *o);

/* Events handled so far (a timer's firing is one). */
uint64_t sim_engine_events(const sim_engine *e);

#endif
