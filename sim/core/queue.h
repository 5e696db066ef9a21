/* queue.h — the event queue: a binary min-heap of small events ordered by (time, insertion).
 * Events are stored by value in one growing array, so the hot loop allocates nothing. The
 * insertion counter is shared: the engine numbers the events it keeps outside the heap (those
 * due now, its timers) from the same counter, so that all of them order as one queue. */
#ifndef SIM_QUEUE_H
#define SIM_QUEUE_H

#include "sim/core/heap.h"

#include <stddef.h>
#include <stdint.h>

typedef struct sim_event {
    int64_t t_ns;    /* when it fires */
    uint64_t seq;    /* insertion order: ties fire first-in first-out */
    uint32_t target; /* component id */
    uint32_t kind;   /* meaning is the target's */
    uint64_t a;      /* payload */
} sim_event;

typedef struct sim_queue {
    sim_event *heap;
    size_t n;
    size_t cap;
    uint64_t next_seq; /* the next insertion number */
} sim_queue;

/* The queue's order: a fires before b (earlier time, or the same time and inserted first). */
static inline int sim_event_before(const sim_event *a, const sim_event *b)
{
    return a->t_ns < b->t_ns || (a->t_ns == b->t_ns && a->seq < b->seq);
}

SIM_HEAP_DEFINE(sim_queue_heap, sim_event, sim_event_before)

void sim_queue_init(sim_queue *q);
void sim_queue_fini(sim_queue *q);
/* Doubles the room of a full queue; returns 0 or SIM_ENOMEM. */
int sim_queue_grow(sim_queue *q);

/* Adds an event (its seq is assigned here); returns 0 or SIM_ENOMEM. Inline: the engine pushes
 * and pops once per event. */
static inline int sim_queue_push(sim_queue *q, int64_t t_ns, uint32_t target, uint32_t kind,
                                 uint64_t a)
{
    if (q->n == q->cap) {
        int rc = sim_queue_grow(q);
        if (rc) return rc;
    }
    sim_queue_heap_push(q->heap, &q->n, (sim_event){t_ns, q->next_seq++, target, kind, a});
    return 0;
}

/* Removes the earliest event into *out; returns 0, or -1 when empty. */
static inline int sim_queue_pop(sim_queue *q, sim_event *out)
{
    if (q->n == 0) return -1;
    *out = sim_queue_heap_pop(q->heap, &q->n);
    return 0;
}

#endif
