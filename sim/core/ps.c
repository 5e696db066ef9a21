/* ps.c — processor sharing with virtual time (see ps.h).
 * V is the service one job has attained since the server was created; a job of work w that
 * arrives when V = v0 finishes when V = v0 + w. V advances at r(n) per ns, a rate computed when
 * n changes. Jobs sit in a min-heap by finish point, except one that was to finish before all
 * the others when it arrived (a CPU thread's short piece of work among long ones): it waits
 * beside the heap, so that it comes and goes without a walk through it; any priority queue in
 * the same total order pops the same jobs. The server's one pending completion is an
 * engine timer, moved earlier when an arrival finishes first. A finished job's owner hears of it
 * through sim_engine_pass_on, so it usually runs at once. */
#include "sim/core/ps.h"

#include "sim/base/err.h"
#include "sim/core/groups.h"
#include "sim/core/heap.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

typedef struct job {
    double finish_v;
    uint32_t reply_to;
    uint32_t reply_kind;
    uint64_t a;
    uint64_t seq; /* FIFO among equal finish points, for determinism */
    int group;    /* whose it is (sim_ps_submit_as) */
} job;

/* Rates kept for n = 1 .. RATE_TABLE - 1 jobs: an arrival or a departure looks its rate up
 * instead of calling the capacity and dividing. */
#define RATE_TABLE 64

struct sim_ps {
    sim_ps_config cfg;
    double rate_of[RATE_TABLE]; /* rate(n), per ns; [0] = 0 */
    sim_engine *e;
    job front; /* the first job, when `fronted`; the rest are in the heap */
    bool fronted;
    job *heap;
    size_t n, n_heap, cap; /* n: jobs active, n_heap of them in the heap */
    uint64_t next_seq;
    double v;           /* attained service per job */
    double r;           /* rate(n) for the current n, per ns */
    int64_t t_last_ns;  /* when v was last advanced */
    int timer;          /* the completion timer */
    int64_t pending_ns; /* when the completion timer fires; -1 = not set */
    double busy_integral, busy_time;
    double load_integral; /* of n, jobs active */
    /* Per group (sim_ps_groups): share is the integral of min(n, busy_units) / n, one active
     * job's part of the busy integral. */
    sim_groups groups;
    double share;
};

static double compute_rate(const sim_ps *ps, int n)
{
    if (n <= 0) return 0;
    double total = ps->cfg.capacity ? ps->cfg.capacity(ps->cfg.ctx, n) : ps->cfg.rate;
    double r = total / n;
    return r < ps->cfg.per_job_max ? r : ps->cfg.per_job_max;
}

static double rate(const sim_ps *ps, int n)
{
    return n < RATE_TABLE ? ps->rate_of[n] : compute_rate(ps, n);
}

static void advance(sim_ps *ps)
{
    int64_t now = sim_engine_now(ps->e);
    int64_t dt = now - ps->t_last_ns;
    int n = (int)ps->n;
    if (dt > 0 && n > 0) {
        ps->v += ps->r * (double)dt;
        int busy = n < ps->cfg.busy_units ? n : ps->cfg.busy_units;
        ps->busy_integral += (double)busy * (double)dt;
        ps->busy_time += (double)dt;
        ps->load_integral += (double)n * (double)dt;
        if (ps->groups.n) ps->share += (double)busy * (double)dt / n;
    }
    ps->t_last_ns = now;
}

static inline int before(const job *a, const job *b)
{
    return a->finish_v < b->finish_v || (a->finish_v == b->finish_v && a->seq < b->seq);
}

SIM_HEAP_DEFINE(jobs, job, before)

/* The job that finishes first (n > 0). */
static const job *first_job(const sim_ps *ps)
{
    return ps->fronted ? &ps->front : &ps->heap[0];
}

/* Adds x: beside the heap when it finishes first (the job there before it goes in the heap). */
static void add_job(sim_ps *ps, job x)
{
    ps->n++;
    if (!ps->fronted && ps->n_heap > 0 && !before(&x, &ps->heap[0])) {
        jobs_push(ps->heap, &ps->n_heap, x);
        return;
    }
    if (ps->fronted) {
        if (!before(&x, &ps->front)) {
            jobs_push(ps->heap, &ps->n_heap, x);
            return;
        }
        jobs_push(ps->heap, &ps->n_heap, ps->front);
    }
    ps->front = x;
    ps->fronted = true;
}

/* Removes and returns the job that finishes first (n > 0). */
static job take_first(sim_ps *ps)
{
    ps->n--;
    if (!ps->fronted) return jobs_pop(ps->heap, &ps->n_heap);
    ps->fronted = false;
    return ps->front;
}

/* ceil of a time 0 <= x < 2^63 ns, as an integer: the truncation, plus one when it fell short
 * (shorter than ceil's sequence on SSE2 followed by the conversion). */
static int64_t ceil_ns(double x)
{
    int64_t whole = (int64_t)x;
    return whole + ((double)whole < x);
}

/* Keeps the completion timer at or before the first job's finish. An arrival that only delays
 * the first finish (the usual case: more jobs, less rate each) leaves the timer, which then
 * fires early, finds nothing done and sets itself again; only an earlier finish moves it. */
static void reschedule(sim_ps *ps)
{
    if (ps->n == 0) return;
    double left = first_job(ps)->finish_v - ps->v;
    int64_t now = sim_engine_now(ps->e);
    if (ps->pending_ns >= 0) {
        /* The timer fires no later than the first finish (at below) when it is due now, or when
         * left / r is surely above d - 1, so that its ceiling is at least d: checked by a product
         * with a margin far above rounding error, which spares the division. */
        int64_t d = ps->pending_ns - now;
        if (d <= 0 || (d >= 2 && left > (double)(d - 1) * ps->r * (1 + 0x1p-40))) return;
    }
    int64_t at = now + (left > 0 ? ceil_ns(left / ps->r) : 0);
    if (ps->pending_ns >= 0 && ps->pending_ns <= at) return;
    ps->pending_ns = at;
    sim_engine_timer_set(ps->e, ps->timer, at);
}

static void handle(sim_engine *e, void *self, const sim_event *ev)
{
    (void)e;
    (void)ev;
    sim_ps *ps = self;
    ps->pending_ns = -1;
    advance(ps);
    /* The event time was rounded up to a whole ns, so v has reached the finish point; the
     * tolerance absorbs floating-point error only. */
    double tol = 1e-9 * (fabs(ps->v) + 1.0);
    bool done = false;
    job last = {0};
    while (ps->n > 0 && first_job(ps)->finish_v <= ps->v + tol) {
        if (done) sim_engine_after(ps->e, 0, last.reply_to, last.reply_kind, last.a);
        last = take_first(ps);
        if (ps->groups.n) sim_groups_change(&ps->groups, last.group, -1, ps->share);
        done = true;
    }
    ps->r = rate(ps, (int)ps->n);
    /* The timer is set after now (a job left is past v + tol), so setting it before the last
     * answer leaves the order of the events due now as it was. */
    reschedule(ps);
    if (done) sim_engine_pass_on(ps->e, last.reply_to, last.reply_kind, last.a);
}

static const sim_component_ops ps_ops = {.name = "shared_server", .handle = handle};

sim_ps *sim_ps_create(sim_engine *e, const sim_ps_config *cfg)
{
    sim_ps *ps = calloc(1, sizeof *ps);
    if (!ps) return NULL;
    ps->cfg = *cfg;
    if (ps->cfg.per_job_max <= 0) ps->cfg.per_job_max = INFINITY;
    if (ps->cfg.busy_units <= 0) ps->cfg.busy_units = 1;
    for (int n = 0; n < RATE_TABLE; n++)
        ps->rate_of[n] = compute_rate(ps, n);
    ps->e = e;
    ps->t_last_ns = sim_engine_now(e);
    ps->pending_ns = -1;
    int id = sim_engine_add(e, &ps_ops, ps);
    ps->timer = id < 0 ? id : sim_engine_timer_add(e, (uint32_t)id, 0);
    if (ps->timer < 0) {
        free(ps);
        return NULL;
    }
    return ps;
}

void sim_ps_destroy(sim_ps *ps)
{
    if (!ps) return;
    sim_groups_free(&ps->groups);
    free(ps->heap);
    free(ps);
}

int sim_ps_submit(sim_ps *ps, double work, uint32_t reply_to, uint32_t reply_kind, uint64_t a)
{
    return sim_ps_submit_as(ps, 0, work, reply_to, reply_kind, a);
}

int sim_ps_groups(sim_ps *ps, int n)
{
    SIM_ASSERT(ps->n == 0 && ps->groups.n == 0);
    return sim_groups_init(&ps->groups, n);
}

/* Doubles the room for jobs. Out of line: it runs a few times per server, and inlined it cost
 * every submission more registers to save. */
__attribute__((noinline)) static int grow(sim_ps *ps)
{
    size_t cap = ps->cap ? 2 * ps->cap : 16;
    job *h = realloc(ps->heap, cap * sizeof *h);
    if (!h) {
        sim_engine_fail(ps->e, SIM_ENOMEM);
        return SIM_ENOMEM;
    }
    ps->heap = h;
    ps->cap = cap;
    return SIM_OK;
}

int sim_ps_submit_as(sim_ps *ps, int group, double work, uint32_t reply_to, uint32_t reply_kind,
                     uint64_t a)
{
    SIM_ASSERT(work >= 0 && isfinite(work));
    /* The heap then has room for every job, the new one too. */
    if (ps->n == ps->cap && grow(ps)) return SIM_ENOMEM;
    advance(ps);
    if (ps->groups.n) sim_groups_change(&ps->groups, group, +1, ps->share);
    add_job(ps, (job){ps->v + work, reply_to, reply_kind, a, ps->next_seq++, group});
    ps->r = rate(ps, (int)ps->n);
    reschedule(ps);
    return SIM_OK;
}

double sim_ps_busy_integral(sim_ps *ps)
{
    advance(ps);
    return ps->busy_integral;
}

double sim_ps_load_integral(sim_ps *ps)
{
    advance(ps);
    return ps->load_integral;
}

double sim_ps_busy_time(sim_ps *ps)
{
    advance(ps);
    return ps->busy_time;
}

double sim_ps_group_busy_integral(sim_ps *ps, int group)
{
    advance(ps);
    return sim_groups_integral(&ps->groups, group, ps->share);
}
