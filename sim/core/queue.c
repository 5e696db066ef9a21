/* queue.c — binary heap keyed by (t_ns, seq); see queue.h. */
#include "sim/core/queue.h"

#include "sim/base/err.h"
#include "sim/core/heap.h"

#include <stdlib.h>

SIM_HEAP_DEFINE(events, sim_event, sim_event_before)

void sim_queue_init(sim_queue *q)
{
    q->heap = NULL;
    q->n = q->cap = 0;
    q->next_seq = 0;
}

void sim_queue_fini(sim_queue *q)
{
    free(q->heap);
    sim_queue_init(q);
}

int sim_queue_push(sim_queue *q, int64_t t_ns, uint32_t target, uint32_t kind, uint64_t a)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 256;
        sim_event *h = realloc(q->heap, cap * sizeof *h);
        if (!h) return SIM_ENOMEM;
        q->heap = h;
        q->cap = cap;
    }
    events_push(q->heap, &q->n, (sim_event){t_ns, q->next_seq++, target, kind, a});
    return SIM_OK;
}

int sim_queue_pop(sim_queue *q, sim_event *out)
{
    if (q->n == 0) return -1;
    *out = events_pop(q->heap, &q->n);
    return 0;
}
