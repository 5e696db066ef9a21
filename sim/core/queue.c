/* queue.c — binary heap keyed by (t_ns, seq); see queue.h. */
#include "sim/core/queue.h"

#include "sim/base/err.h"

#include <stdlib.h>

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

int sim_queue_grow(sim_queue *q)
{
    size_t cap = q->cap ? 2 * q->cap : 256;
    sim_event *h = realloc(q->heap, cap * sizeof *h);
    if (!h) return SIM_ENOMEM;
    q->heap = h;
    q->cap = cap;
    return SIM_OK;
}
