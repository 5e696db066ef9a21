/* storage.c — a storage device serving sample reads (see pipeline.h).
 * A read waits for one of queue_depth service slots (an HDD has one: its head seeks for one
 * request at a time), spends the access latency, then transfers its bytes on a shared server of
 * the device's bandwidth, shared by all reads transferring at once. */
#include "sim/core/pipeline.h"

#include "sim/base/err.h"
#include "sim/core/groups.h"

#include <stdlib.h>

enum { EV_LATENCY_DONE, EV_TRANSFER_DONE };

typedef struct request {
    double bytes;
    uint32_t reply_to, kind;
    uint64_t a;
    uint32_t next; /* FIFO link / free list */
    int group;     /* whose read it is (sim_storage_read_as) */
} request;

#define NIL UINT32_MAX

struct sim_storage {
    sim_engine *e;
    const bool *observed; /* sim_engine_observed */
    uint32_t id;
    sim_storage_desc d;
    sim_ps *bw;
    request *req;
    uint32_t n_req, cap_req, free_head;
    uint32_t wait_head, wait_tail;
    int in_service;
    int64_t busy_since;
    double busy_ns;
    /* Per group (sim_storage_groups): share is the integral of 1 / in_service while busy, one
     * request's part of the busy time, brought up to share_ns. */
    sim_groups groups;
    double share;
    int64_t share_ns;
};

/* Brings the per-request share up to now, before in_service changes. */
static void advance(sim_storage *s)
{
    int64_t now = sim_engine_now(s->e);
    if (s->in_service > 0) s->share += (double)(now - s->share_ns) / s->in_service;
    s->share_ns = now;
}

/* Tells the observer that read r entered a service slot or is done. */
static void report(sim_storage *s, sim_obs_kind kind, uint32_t r)
{
    if (!*s->observed) return;
    sim_observation o = {.kind = kind, .rank = -1, .index = (int)r, .a = (int64_t)s->req[r].bytes};
    sim_engine_observe(s->e, &o);
}

static void start(sim_storage *s, uint32_t r)
{
    if (s->groups.n) {
        advance(s);
        sim_groups_change(&s->groups, s->req[r].group, +1, s->share);
    }
    if (s->in_service++ == 0) s->busy_since = sim_engine_now(s->e);
    report(s, SIM_OBS_READ_BEGIN, r);
    sim_engine_after(s->e, (int64_t)(s->d.latency_us * 1e3), s->id, EV_LATENCY_DONE, r);
}

static void handle(sim_engine *e, void *self, const sim_event *ev)
{
    sim_storage *s = self;
    uint32_t r = (uint32_t)ev->a;
    request *q = &s->req[r];
    if (ev->kind == EV_LATENCY_DONE) {
        if (q->bytes > 0) {
            sim_ps_submit(s->bw, q->bytes, s->id, EV_TRANSFER_DONE, r);
            return;
        }
    }
    /* The read is complete: answer, free the slot, admit the next waiting read. */
    report(s, SIM_OBS_READ_END, r);
    request done = *q;
    q->next = s->free_head;
    s->free_head = r;
    if (s->groups.n) {
        advance(s);
        sim_groups_change(&s->groups, done.group, -1, s->share);
    }
    if (--s->in_service == 0) s->busy_ns += (double)(sim_engine_now(e) - s->busy_since);
    if (s->wait_head == NIL) {
        sim_engine_pass_on(e, done.reply_to, done.kind, done.a);
        return;
    }
    sim_engine_after(e, 0, done.reply_to, done.kind, done.a);
    uint32_t w = s->wait_head;
    s->wait_head = s->req[w].next;
    if (s->wait_head == NIL) s->wait_tail = NIL;
    start(s, w);
}

static const sim_component_ops storage_ops = {.name = "storage", .handle = handle};

sim_storage *sim_storage_create(sim_engine *e, const sim_storage_desc *d)
{
    sim_storage *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->e = e;
    s->observed = sim_engine_observed(e);
    s->d = *d;
    s->free_head = s->wait_head = s->wait_tail = NIL;
    sim_ps_config bw = {.name = "storage-bw",
                        .rate = d->read_mbps * 1e6 / 1e9,
                        .per_job_max = d->read_mbps * 1e6 / 1e9,
                        .busy_units = 1};
    s->bw = sim_ps_create(e, &bw);
    int id = sim_engine_add(e, &storage_ops, s);
    if (!s->bw || id < 0) {
        sim_ps_destroy(s->bw);
        free(s);
        return NULL;
    }
    s->id = (uint32_t)id;
    return s;
}

void sim_storage_destroy(sim_storage *s)
{
    if (!s) return;
    sim_groups_free(&s->groups);
    sim_ps_destroy(s->bw);
    free(s->req);
    free(s);
}

void sim_storage_read(sim_storage *s, double bytes, uint32_t reply_to, uint32_t kind, uint64_t a)
{
    sim_storage_read_as(s, 0, bytes, reply_to, kind, a);
}

int sim_storage_groups(sim_storage *s, int n)
{
    SIM_ASSERT(s->in_service == 0 && s->groups.n == 0);
    return sim_groups_init(&s->groups, n);
}

void sim_storage_read_as(sim_storage *s, int group, double bytes, uint32_t reply_to, uint32_t kind,
                         uint64_t a)
{
    uint32_t r = s->free_head;
    if (r != NIL) {
        s->free_head = s->req[r].next;
    } else {
        if (s->n_req == s->cap_req) {
            uint32_t cap = s->cap_req ? 2 * s->cap_req : 64;
            request *q = realloc(s->req, cap * sizeof *q);
            if (!q) {
                sim_engine_fail(s->e, SIM_ENOMEM);
                return;
            }
            s->req = q;
            s->cap_req = cap;
        }
        r = s->n_req++;
    }
    s->req[r] = (request){bytes, reply_to, kind, a, NIL, group};
    if (s->in_service < s->d.queue_depth) {
        start(s, r);
    } else if (s->wait_tail == NIL) {
        s->wait_head = s->wait_tail = r;
    } else {
        s->req[s->wait_tail].next = r;
        s->wait_tail = r;
    }
}

double sim_storage_busy_ns(sim_storage *s)
{
    double busy = s->busy_ns;
    if (s->in_service > 0) busy += (double)(sim_engine_now(s->e) - s->busy_since);
    return busy;
}

double sim_storage_group_busy_ns(sim_storage *s, int group)
{
    advance(s);
    return sim_groups_integral(&s->groups, group, s->share);
}
