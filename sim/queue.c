/* queue.c — binary heap keyed by (t_ns, seq); see queue.h. */
#include "sim/queue.h"

#include "sim/err.h"

#include <stdlib.h>

static inline int earlier(const sim_event *a, const sim_event *b)
{
    return a->t_ns < b->t_ns || (a->t_ns == b->t_ns && a->seq < b->seq);
}

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
        if (!h)
            return SIM_ENOMEM;
        q->heap = h;
        q->cap = cap;
    }
    sim_event e = {t_ns, q->next_seq++, target, kind, a};
    size_t i = q->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!earlier(&e, &q->heap[parent]))
            break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = e;
    return SIM_OK;
}

int sim_queue_pop(sim_queue *q, sim_event *out)
{
    if (q->n == 0)
        return -1;
    *out = q->heap[0];
    sim_event last = q->heap[--q->n];
    size_t i = 0, n = q->n;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && earlier(&q->heap[child + 1], &q->heap[child]))
            child++;
        if (!earlier(&q->heap[child], &last))
            break;
        q->heap[i] = q->heap[child];
        i = child;
    }
    if (n)
        q->heap[i] = last;
    return 0;
}
