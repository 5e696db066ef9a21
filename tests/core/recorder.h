/* recorder.h — the fake neighbour of the component tests: a component that records every event
 * it is sent (time, kind, payload), so a test can drive one component alone and read its answers.
 * Header-only: each test file is its own executable. */
#ifndef TEST_RECORDER_H
#define TEST_RECORDER_H

#include "sim/core/engine.h"

#include <stdint.h>

#define RECORDER_MAX 256

typedef struct recorder {
    uint32_t id;
    int n;
    int64_t t[RECORDER_MAX];
    uint32_t kind[RECORDER_MAX];
    uint64_t a[RECORDER_MAX];
    /* optional: called for each event after it is recorded (a test's own reaction) */
    void (*react)(struct recorder *r, sim_engine *e, const sim_event *ev);
    void *ctx;
} recorder;

static void recorder_handle(sim_engine *e, void *self, const sim_event *ev)
{
    recorder *r = self;
    if (r->n < RECORDER_MAX) {
        r->t[r->n] = ev->t_ns;
        r->kind[r->n] = ev->kind;
        r->a[r->n] = ev->a;
        r->n++;
    }
    if (r->react) r->react(r, e, ev);
}

static const sim_component_ops recorder_ops = {.name = "recorder", .handle = recorder_handle};

/* Registers r (zeroed first) with e. */
static inline void recorder_attach(recorder *r, sim_engine *e)
{
    *r = (recorder){0};
    r->id = (uint32_t)sim_engine_add(e, &recorder_ops, r);
}

#endif
