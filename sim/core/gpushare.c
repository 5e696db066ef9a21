/* gpushare.c — one physical GPU shared by the streams of several jobs (see pipeline.h).
 * Time-slicing: one context at a time holds the SMs; it keeps them while it has a kernel ready
 * and its slice lasts, a kernel longer than the slice is preempted at the slice's end, and every
 * change of context costs a switch during which nothing runs. MPS: all ready kernels run at
 * once, each at full speed while their SM shares add up to at most one GPU, else all slowed by
 * the same factor (the SMs are the shared limit). */
#include "sim/core/pipeline.h"

#include "sim/base/err.h"
#include "sim/core/metrics.h"

#include <stdlib.h>

enum { EV_DECIDE, EV_SWITCHED, EV_PIECE_DONE, EV_MPS_DONE };

const char *const sim_gpu_sharing_names[] = {"time_slice", "mps", NULL};

typedef struct share_ctx {
    sim_metrics *metrics;
    int rank;
    bool pending;   /* a kernel is ready or running */
    double left_ns; /* its time left at full speed */
    float sm_fraction;
    uint32_t reply_to, reply_kind;
} share_ctx;

struct sim_gpushare {
    sim_engine *e;
    uint32_t id;
    sim_gpushare_config cfg;
    share_ctx *ctx;
    int n, cap;
    /* time-slicing */
    int cur;   /* the context holding the GPU; -1 = none yet */
    bool busy; /* a piece or a switch is under way, or a decision is due */
    int64_t slice_end_ns, piece_ns;
    /* MPS */
    int timer;
    double rate;      /* speed of every running kernel, (0, 1] */
    int64_t mps_t_ns; /* when the running kernels were last advanced */
    /* the physical GPU's figures */
    int64_t t_last_ns;
    double busy_ns, sm_ns, load; /* load: SM share in use now, 0..1 */
};

/* Integrates the device's figures up to now. */
static void settle(sim_gpushare *s)
{
    int64_t now = sim_engine_now(s->e);
    double dt = (double)(now - s->t_last_ns);
    if (s->load > 0) {
        s->busy_ns += dt;
        s->sm_ns += dt * s->load;
    }
    s->t_last_ns = now;
}

static void set_load(sim_gpushare *s, double load)
{
    settle(s);
    s->load = load > 1 ? 1 : load;
}

static void reply(sim_gpushare *s, share_ctx *c)
{
    c->pending = false;
    sim_engine_after(s->e, 0, c->reply_to, c->reply_kind, 0);
}

/* ---- time-slicing -------------------------------------------------------------------------- */

static void start_piece(sim_gpushare *s)
{
    share_ctx *c = &s->ctx[s->cur];
    int64_t now = sim_engine_now(s->e);
    if (now >= s->slice_end_ns) s->slice_end_ns = now + s->cfg.slice_ns;
    int64_t left = (int64_t)c->left_ns;
    s->piece_ns = left < s->slice_end_ns - now ? left : s->slice_end_ns - now;
    sim_metrics_gpu(c->metrics, c->rank, SIM_GPUST_KERNEL, c->sm_fraction);
    set_load(s, c->sm_fraction);
    sim_engine_after(s->e, s->piece_ns, s->id, EV_PIECE_DONE, 0);
}

/* The next context to run: the holder while its slice lasts, else the next one in turn with a
 * kernel ready (the holder last); -1 = none. */
static int next_ctx(const sim_gpushare *s)
{
    int64_t now = sim_engine_now(s->e);
    if (s->cur >= 0 && s->ctx[s->cur].pending && now < s->slice_end_ns) return s->cur;
    for (int k = 1; k <= s->n; k++) {
        int i = (s->cur + k) % s->n;
        if (s->ctx[i].pending) return i;
    }
    return -1;
}

static void decide(sim_gpushare *s)
{
    int next = next_ctx(s);
    s->busy = next >= 0;
    if (next < 0) return;
    if (next == s->cur) {
        start_piece(s);
        return;
    }
    bool first = s->cur < 0;
    s->cur = next;
    s->slice_end_ns = sim_engine_now(s->e) + (first ? 0 : s->cfg.switch_ns) + s->cfg.slice_ns;
    if (first) {
        start_piece(s);
        return;
    }
    /* The switch: the outgoing context's state is saved and the next one's restored. */
    sim_engine_after(s->e, s->cfg.switch_ns, s->id, EV_SWITCHED, 0);
}

static void piece_done(sim_gpushare *s)
{
    share_ctx *c = &s->ctx[s->cur];
    c->left_ns -= (double)s->piece_ns;
    set_load(s, 0);
    if (c->left_ns >= 1) { /* preempted at the slice's end: it waits for its next turn */
        sim_metrics_gpu(c->metrics, c->rank, SIM_GPUST_SHARED, 0);
        decide(s);
        return;
    }
    reply(s, c);
    /* Decide after the stream has had its answer and queued what it has ready next. */
    sim_engine_after(s->e, 0, s->id, EV_DECIDE, 0);
}

/* ---- MPS ----------------------------------------------------------------------------------- */

/* Advances every running kernel to now at the current rate. */
static void mps_advance(sim_gpushare *s)
{
    int64_t now = sim_engine_now(s->e);
    double dt = (double)(now - s->mps_t_ns);
    for (int i = 0; i < s->n; i++)
        if (s->ctx[i].pending) s->ctx[i].left_ns -= dt * s->rate;
    s->mps_t_ns = now;
}

/* Sets the rate for the kernels now running and the timer for the first to finish. */
static void mps_plan(sim_gpushare *s)
{
    double demand = 0, first = -1;
    for (int i = 0; i < s->n; i++)
        if (s->ctx[i].pending) {
            demand += s->ctx[i].sm_fraction;
            if (first < 0 || s->ctx[i].left_ns < first) first = s->ctx[i].left_ns;
        }
    s->rate = demand > 1 ? 1 / demand : 1;
    set_load(s, demand);
    if (first < 0) return;
    double wait = first / s->rate;
    sim_engine_timer_set(s->e, s->timer, sim_engine_now(s->e) + (int64_t)(wait + 0.999));
}

static void mps_done(sim_gpushare *s)
{
    mps_advance(s);
    for (int i = 0; i < s->n; i++)
        if (s->ctx[i].pending && s->ctx[i].left_ns < 1) reply(s, &s->ctx[i]);
    mps_plan(s);
}

static void handle(sim_engine *e, void *self, const sim_event *ev)
{
    (void)e;
    sim_gpushare *s = self;
    switch (ev->kind) {
    case EV_DECIDE:
        decide(s);
        break;
    case EV_SWITCHED:
        start_piece(s);
        break;
    case EV_PIECE_DONE:
        piece_done(s);
        break;
    case EV_MPS_DONE:
        mps_done(s);
        break;
    }
}

static const sim_component_ops share_ops = {.name = "gpushare", .handle = handle};

sim_gpushare *sim_gpushare_create(sim_engine *e, const sim_gpushare_config *cfg)
{
    sim_gpushare *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->e = e;
    s->cfg = *cfg;
    s->cur = -1;
    s->rate = 1;
    int id = sim_engine_add(e, &share_ops, s);
    s->timer = id >= 0 ? sim_engine_timer_add(e, (uint32_t)id, EV_MPS_DONE) : -1;
    if (id < 0 || s->timer < 0) {
        free(s);
        return NULL;
    }
    s->id = (uint32_t)id;
    return s;
}

void sim_gpushare_destroy(sim_gpushare *s)
{
    if (!s) return;
    free(s->ctx);
    free(s);
}

int sim_gpushare_attach(sim_gpushare *s, sim_metrics *metrics, int rank)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 4;
        share_ctx *c = realloc(s->ctx, (size_t)cap * sizeof *c);
        if (!c) return SIM_ENOMEM;
        s->ctx = c;
        s->cap = cap;
    }
    s->ctx[s->n] = (share_ctx){.metrics = metrics, .rank = rank};
    return s->n++;
}

void sim_gpushare_kernel(sim_gpushare *s, int ctx, int64_t dur_ns, float sm_fraction,
                         uint32_t reply_to, uint32_t reply_kind)
{
    share_ctx *c = &s->ctx[ctx];
    SIM_ASSERT(!c->pending);
    if (s->cfg.mode == SIM_SHARE_MPS) mps_advance(s);
    *c = (share_ctx){c->metrics, c->rank, true, (double)dur_ns, sm_fraction, reply_to, reply_kind};
    if (s->cfg.mode == SIM_SHARE_MPS) {
        sim_metrics_gpu(c->metrics, c->rank, SIM_GPUST_KERNEL, sm_fraction);
        mps_plan(s);
        return;
    }
    sim_metrics_gpu(c->metrics, c->rank, SIM_GPUST_SHARED, 0);
    if (s->busy) return;
    /* Decide once everything due now has queued its kernels. */
    s->busy = true;
    sim_engine_after(s->e, 0, s->id, EV_DECIDE, 0);
}

double sim_gpushare_busy_ns(sim_gpushare *s)
{
    settle(s);
    return s->busy_ns;
}

double sim_gpushare_sm_active_ns(sim_gpushare *s)
{
    settle(s);
    return s->sm_ns;
}
