/* loader.c — PyTorch's DataLoader, as torch/utils/data/dataloader.py runs it (see pipeline.h).
 * num_workers = N > 0: batch i goes to worker i mod N; at most prefetch_factor x N batches are
 * outstanding (sent to a worker and not yet handed to the main thread); a worker fetches its
 * batch sample by sample (read, then decode), collates it, and the pin-memory thread copies
 * results into page-locked memory in arrival order; the main thread receives them strictly in
 * order. num_workers = 0: the main thread does the same work itself when it asks for a batch.
 * Page cache: a sample read from the device stays in RAM while the cache has room, and is read
 * from memory (a memcpy) in later epochs. A dataset in memory (a TensorDataset) is not read at
 * all: fetching a sample is only its CPU work (indexing, the transform if any). */
#include "sim/core/pipeline.h"

#include "sim/base/err.h"
#include "sim/base/rng.h"
#include "sim/core/job.h"
#include "sim/core/metrics.h"
#include "sim/core/timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { EV_STARTED, EV_READ_DONE, EV_DECODE_DONE, EV_COLLATE_DONE, EV_PIN_DONE };
/* A sample is known by its state alone, one byte at its position in the epoch's order: nothing
 * else about it differs between samples, so the shuffle moves the byte and the reads visit the
 * bytes in order. */
#define SEEN 0x1u   /* read this epoch */
#define CACHED 0x2u /* in the page cache */

const char *const sim_data_location_names[] = {"storage", "memory", NULL};

enum { PH_READ, PH_DECODE, PH_COLLATE }; /* what a busy worker is doing */
#define SHUFFLE_AHEAD 16                 /* swaps between a shuffle draw and its use */

typedef struct worker {
    int64_t *queue; /* ring of assigned batch indices */
    int q_head, q_len, q_cap;
    bool alive;
    bool busy;
    int64_t batch;
    int64_t batch_mult; /* where its batch's decode multipliers start in decode_mult */
    int index_in_batch;
    int batch_samples;
    int64_t batch_ns, phase_ns; /* starts of the batch and of the running phase */
    bool hit;                   /* the running read is from the page cache */
    uint8_t phase;
    int64_t busy_ns; /* batches done so far, from start to collate */
} worker;

struct sim_loader {
    sim_engine *e;
    const bool *observed; /* sim_engine_observed */
    uint32_t id;
    sim_loader_config cfg;
    bool main_thread; /* num_workers = 0 */
    int n_workers;
    worker *w;
    int64_t batches;      /* this epoch's: fewer once sim_loader_cut ends it early */
    int64_t full_batches; /* an epoch's that runs to its end */
    uint8_t *order;       /* per position of this epoch: SEEN | CACHED of the sample there */
    int64_t cached;
    sim_rng rng;
    int epoch;
    int64_t next_send, next_yield, outstanding;
    /* next_yield mod window and mod n_workers, kept as it advances: the awaited batch's cause is
     * asked after every loader event, which then makes no division. */
    int64_t yield_slot;
    int yield_worker;
    int next_worker;
    /* Batches sent and not yet yielded (at most `window`) keep their state in rings indexed by
     * batch mod window: whether it is ready, and (cv > 0) the lognormal multiplier of each of
     * its samples' decode, drawn when it is sent, in position order, from decode_rng: the
     * stream the epoch's shuffle left in rng, which rng takes back at the next epoch. */
    int64_t window;
    uint8_t *ready;
    float *decode_mult;     /* window x batch_size; NULL if cv = 0 */
    sim_rng decode_rng;     /* unused if cv = 0 */
    int64_t drawn;          /* multipliers drawn this epoch */
    double ln_mu, ln_sigma; /* of the multipliers' logarithm */
    int64_t *pin_q;
    int64_t pin_head, pin_len;
    bool pin_busy;
    bool waiting;
    uint32_t wait_target, wait_kind;
    int64_t reads, hits, decodes;
    int64_t pin_ns; /* start of the running pin job */
    int cause;      /* last sim_stall told to the metrics; -1 = none yet */
};

/* Reports what worker wi (the main thread with num_workers = 0) or the pin thread (wi = -1) did
 * since start_ns for batch `batch` of this epoch. */
static void report(sim_loader *l, int wi, sim_tl_what what, int64_t start_ns, int64_t batch,
                   int64_t b)
{
    if (!*l->observed) return;
    sim_tl_lane_kind thread = l->main_thread ? SIM_TL_LANE_MAIN
                              : wi < 0       ? SIM_TL_LANE_PIN
                                             : SIM_TL_LANE_WORKER;
    sim_observation o = {.kind = SIM_OBS_SPAN,
                         .rank = l->cfg.rank,
                         .thread = (int)thread,
                         .index = thread == SIM_TL_LANE_WORKER ? wi : 0,
                         .what = (int)what,
                         .start_ns = start_ns,
                         .a = (int64_t)l->epoch * l->batches + batch,
                         .b = b};
    sim_engine_observe(l->e, &o);
}

static void start_batch(sim_loader *l, int wi);

int64_t sim_loader_batches(const sim_loader *l)
{
    return l->batches;
}

int sim_loader_batch_samples(const sim_loader *l, int64_t b)
{
    int64_t first = b * l->cfg.batch_size;
    int64_t left = l->cfg.samples - first;
    return (int)(left < l->cfg.batch_size ? left : l->cfg.batch_size);
}

static void deliver(sim_loader *l);

/* Draws the decode multipliers of batch b, which is being sent. */
static void draw_multipliers(sim_loader *l, int64_t b)
{
    if (!l->decode_mult) return;
    float *m = &l->decode_mult[b % l->window * l->cfg.batch_size];
    int n = sim_loader_batch_samples(l, b);
    for (int i = 0; i < n; i++)
        m[i] = (float)sim_rng_lognormal(&l->decode_rng, l->ln_mu, l->ln_sigma);
    l->drawn += n;
}

/* What holds up the next batch to yield: its worker (batch b goes to worker b mod N) reading
 * from the device, or preprocessing it (decode, collate, a page-cache memcpy, or the pin thread
 * copying it), or starting up. */
static sim_stall awaited_cause(const sim_loader *l)
{
    if (l->main_thread) return SIM_STALL_MAIN;
    if (l->next_yield >= l->batches || l->ready[l->yield_slot]) return (sim_stall)l->cause;
    const worker *w = &l->w[l->yield_worker];
    if (!w->alive) return SIM_STALL_OTHER;
    if (w->busy && w->phase == PH_READ && !w->hit) return SIM_STALL_STORAGE;
    return SIM_STALL_DECODE;
}

/* Tells the metrics when the awaited batch's cause changes: after every loader event. */
static void note_cause(sim_loader *l)
{
    if (!l->cfg.metrics) return;
    sim_stall c = awaited_cause(l);
    if ((int)c == l->cause) return;
    l->cause = (int)c;
    sim_metrics_data_cause(l->cfg.metrics, l->cfg.rank, c);
}

static void try_send(sim_loader *l)
{
    int64_t limit =
        l->main_thread ? (l->waiting ? 1 : 0) : (int64_t)l->cfg.prefetch_factor * l->n_workers;
    while (l->next_send < l->batches && l->outstanding < limit) {
        int wi = l->next_worker;
        worker *w = &l->w[wi];
        SIM_ASSERT(w->q_len < w->q_cap);
        draw_multipliers(l, l->next_send);
        w->queue[(w->q_head + w->q_len++) % w->q_cap] = l->next_send++;
        l->outstanding++;
        l->next_worker = (l->next_worker + 1) % l->n_workers;
        start_batch(l, wi);
    }
}

static void deliver(sim_loader *l)
{
    if (!l->waiting || l->next_yield >= l->batches || !l->ready[l->yield_slot]) return;
    l->ready[l->yield_slot] = 0; /* the slot's next batch is not ready */
    l->waiting = false;
    sim_engine_after(l->e, 0, l->wait_target, l->wait_kind, (uint64_t)l->next_yield);
    l->next_yield++;
    if (++l->yield_slot == l->window) l->yield_slot = 0;
    if (++l->yield_worker == l->n_workers) l->yield_worker = 0;
    l->outstanding--;
    try_send(l);
}

static void cpu_job(sim_loader *l, double ref_ns, uint32_t kind, uint64_t a)
{
    sim_ps_submit_as(l->cfg.cpu, l->cfg.group, ref_ns > 0 ? ref_ns : 0, l->id, kind, a);
}

/* A copy in host memory (collate, pinning, a page-cache read): the thread streams through the
 * memory bus at up to one thread's memcpy rate, sharing the bus with every other copy. */
static void mem_job(sim_loader *l, double bytes, uint32_t kind, uint64_t a)
{
    sim_ps_submit_as(l->cfg.mem, l->cfg.group, bytes > 0 ? bytes : 0, l->id, kind, a);
}

/* The sample's CPU work (decode, augment; indexing for a tensor), once its bytes are in RAM. */
static void start_decode(sim_loader *l, int wi)
{
    worker *w = &l->w[wi];
    double mult = l->decode_mult ? l->decode_mult[w->batch_mult + w->index_in_batch] : 1.0;
    l->decodes++;
    w->phase_ns = sim_engine_now(l->e);
    w->phase = PH_DECODE;
    cpu_job(l, l->cfg.decode_ref_ns * mult, EV_DECODE_DONE, (uint64_t)wi);
}

static void start_sample(sim_loader *l, int wi)
{
    worker *w = &l->w[wi];
    int64_t pos = w->batch * l->cfg.batch_size + w->index_in_batch;
    uint8_t *sample = &l->order[pos];
    SIM_ASSERT(!(*sample & SEEN));
    *sample |= SEEN;
    l->reads++;
    if (l->cfg.in_memory) {
        w->hit = false;
        start_decode(l, wi);
        return;
    }
    w->phase_ns = sim_engine_now(l->e);
    w->phase = PH_READ;
    w->hit = (*sample & CACHED) != 0;
    if (w->hit) {
        l->hits++;
        mem_job(l, l->cfg.sample_bytes, EV_READ_DONE, (uint64_t)wi);
        return;
    }
    if (l->cached < l->cfg.cached_samples) {
        *sample |= CACHED;
        l->cached++;
    }
    sim_storage_read_as(l->cfg.storage, l->cfg.group, l->cfg.sample_bytes, l->id, EV_READ_DONE,
                        (uint64_t)wi);
}

static void start_batch(sim_loader *l, int wi)
{
    worker *w = &l->w[wi];
    if (!w->alive || w->busy || w->q_len == 0)
        return; /* a worker fetches one batch at a time, once started */
    w->batch = w->queue[w->q_head];
    w->batch_mult = w->batch % l->window * l->cfg.batch_size;
    w->q_head = (w->q_head + 1) % w->q_cap;
    w->q_len--;
    w->busy = true;
    w->index_in_batch = 0;
    w->batch_samples = sim_loader_batch_samples(l, w->batch);
    w->batch_ns = sim_engine_now(l->e);
    start_sample(l, wi);
}

static void start_pin(sim_loader *l)
{
    if (l->pin_busy || l->pin_len == 0) return;
    int64_t b = l->pin_q[l->pin_head];
    l->pin_head = (l->pin_head + 1) % l->window;
    l->pin_len--;
    l->pin_busy = true;
    l->pin_ns = sim_engine_now(l->e);
    double bytes = (double)sim_loader_batch_samples(l, b) * l->cfg.input_bytes;
    mem_job(l, bytes, EV_PIN_DONE, (uint64_t)b);
}

static void batch_done(sim_loader *l, int64_t b)
{
    if (l->cfg.pin_memory) {
        l->pin_q[(l->pin_head + l->pin_len++) % l->window] = b;
        start_pin(l);
    } else {
        l->ready[b % l->window] = 1;
        deliver(l);
    }
}

static void handle_event(sim_engine *e, sim_loader *l, const sim_event *ev)
{
    if (ev->kind == EV_PIN_DONE) {
        report(l, -1, SIM_TL_PIN_BATCH, l->pin_ns, (int64_t)ev->a, 0);
        l->pin_busy = false;
        l->ready[ev->a % (uint64_t)l->window] = 1;
        start_pin(l);
        deliver(l);
        return;
    }
    int wi = (int)ev->a;
    worker *w = &l->w[wi];
    switch (ev->kind) {
    case EV_STARTED:
        report(l, wi, SIM_TL_WORKER_START, w->phase_ns, -1, 0);
        w->alive = true;
        start_batch(l, wi);
        break;
    case EV_READ_DONE:
        report(l, wi, SIM_TL_READ, w->phase_ns, w->batch, w->hit);
        start_decode(l, wi);
        break;
    case EV_DECODE_DONE:
        report(l, wi, SIM_TL_DECODE, w->phase_ns, w->batch, 0);
        w->phase_ns = sim_engine_now(e);
        if (++w->index_in_batch < w->batch_samples) {
            start_sample(l, wi);
        } else {
            /* default_collate stacks the samples into one tensor: a copy of the batch. */
            double bytes = (double)w->batch_samples * l->cfg.input_bytes;
            w->phase = PH_COLLATE;
            mem_job(l, bytes, EV_COLLATE_DONE, (uint64_t)wi);
        }
        break;
    case EV_COLLATE_DONE:
        report(l, wi, SIM_TL_COLLATE, w->phase_ns, w->batch, 0);
        report(l, wi, SIM_TL_BATCH, w->batch_ns, w->batch, 0);
        w->busy_ns += sim_engine_now(e) - w->batch_ns;
        w->busy = false;
        batch_done(l, w->batch); /* may already hand the worker its next batch */
        start_batch(l, wi);
        break;
    }
}

static void handle(sim_engine *e, void *self, const sim_event *ev)
{
    sim_loader *l = self;
    handle_event(e, l, ev);
    note_cause(l);
}

static const sim_component_ops loader_ops = {.name = "loader", .handle = handle};

sim_loader *sim_loader_create(sim_engine *e, const sim_loader_config *cfg, int *rc)
{
    *rc = SIM_ENOMEM;
    sim_loader *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    l->e = e;
    l->observed = sim_engine_observed(e);
    l->cfg = *cfg;
    l->cause = -1;
    l->main_thread = cfg->num_workers == 0;
    l->n_workers = l->main_thread ? 1 : cfg->num_workers;
    l->batches = l->full_batches = (cfg->samples + cfg->batch_size - 1) / cfg->batch_size;
    l->w = calloc((size_t)l->n_workers, sizeof *l->w);
    SIM_ASSERT(cfg->dataset_samples <= SIM_DATASET_MAX_SAMPLES);
    l->order = calloc((size_t)cfg->dataset_samples, 1); /* no sample seen or cached yet */
    l->window = l->main_thread ? 1 : (int64_t)cfg->prefetch_factor * l->n_workers;
    l->ready = calloc((size_t)l->window, 1);
    l->pin_q = malloc((size_t)l->window * sizeof *l->pin_q);
    if (cfg->decode_cv > 0) {
        l->decode_mult = malloc((size_t)(l->window * cfg->batch_size) * sizeof(float));
        /* Lognormal with mean 1 and the given coefficient of variation. */
        double s2 = log1p(cfg->decode_cv * cfg->decode_cv);
        l->ln_mu = -s2 / 2;
        l->ln_sigma = sqrt(s2);
    }
    if (!l->w || !l->order || !l->ready || !l->pin_q || (cfg->decode_cv > 0 && !l->decode_mult))
        goto fail;
    sim_rng_seed(&l->rng, cfg->seed);
    l->decode_rng = l->rng;
    l->drawn = cfg->samples; /* as if an epoch had drawn them all: rng takes the same state */
    int per_worker = l->main_thread ? 1 : cfg->prefetch_factor + 1;
    for (int i = 0; i < l->n_workers; i++) {
        l->w[i].q_cap = per_worker;
        l->w[i].queue = malloc((size_t)per_worker * sizeof(int64_t));
        if (!l->w[i].queue) goto fail;
    }
    int id = sim_engine_add(e, &loader_ops, l);
    if (id < 0) goto fail;
    l->id = (uint32_t)id;
    *rc = SIM_OK;
    return l;
fail:
    sim_loader_destroy(l);
    return NULL;
}

void sim_loader_destroy(sim_loader *l)
{
    if (!l) return;
    for (int i = 0; l->w && i < l->n_workers; i++)
        free(l->w[i].queue);
    free(l->w);
    free(l->order);
    free(l->decode_mult);
    free(l->ready);
    free(l->pin_q);
    free(l);
}

/* The epoch's random draws: the shuffle, then (cv > 0) one decode multiplier per position, which
 * draw_multipliers takes from decode_rng batch by batch as they are sent, in the same order. */
static void shuffle(sim_loader *l)
{
    const sim_loader_config *c = &l->cfg;
    if (l->decode_mult) {
        /* The last epoch's draws not yet taken (none when it ran to its end), then the state
         * its multipliers left. */
        for (; l->drawn < c->samples; l->drawn++)
            sim_rng_lognormal(&l->decode_rng, l->ln_mu, l->ln_sigma);
        l->rng = l->decode_rng;
    }
    /* RandomSampler: a fresh permutation of the shard every epoch, drawn only as far as the
     * epoch reads it (max_steps may cut the epoch to a few batches of a large dataset).
     * Fisher-Yates stopped after `samples` positions gives a uniform random ordered subset, and
     * it may start from the previous epoch's order (any permutation). The draws do not depend
     * on the array, so each is made SHUFFLE_AHEAD swaps early and its byte fetched meanwhile. */
    uint64_t n = (uint64_t)c->dataset_samples;
    uint64_t m = (uint64_t)c->samples < n - 1 ? (uint64_t)c->samples : n - 1;
    uint64_t ahead[SHUFFLE_AHEAD];
    for (uint64_t i = 0; i < m + SHUFFLE_AHEAD; i++) {
        uint64_t *slot = &ahead[i % SHUFFLE_AHEAD];
        if (i >= SHUFFLE_AHEAD) {
            uint64_t k = i - SHUFFLE_AHEAD, j = *slot;
            uint8_t tmp = l->order[k];
            l->order[k] = l->order[j];
            l->order[j] = tmp;
        }
        if (i < m) {
            *slot = i + sim_rng_uniform_int(&l->rng, (uint32_t)(n - i)); /* n <= 2^30 */
            __builtin_prefetch(&l->order[*slot], 1);
        }
    }
    if (l->decode_mult) {
        l->decode_rng = l->rng;
        l->drawn = 0;
    }
}

int sim_loader_begin_epoch(sim_loader *l, int epoch)
{
    const sim_loader_config *c = &l->cfg;
    l->epoch = epoch;
    /* The previous epoch read order[0 .. samples): only those were SEEN. */
    for (int64_t i = 0; i < c->samples; i++)
        l->order[i] &= ~SEEN;
    shuffle(l);
    l->batches = l->full_batches;
    memset(l->ready, 0, (size_t)l->window);
    l->next_send = l->next_yield = l->outstanding = 0;
    l->yield_slot = l->yield_worker = 0;
    l->next_worker = 0;
    l->pin_head = l->pin_len = 0;
    l->reads = l->hits = l->decodes = 0;
    for (int i = 0; i < l->n_workers; i++) {
        worker *w = &l->w[i];
        SIM_ASSERT(!w->busy && w->q_len == 0);
        w->q_head = 0;
        if (l->main_thread) {
            w->alive = true;
        } else if (epoch == 0 || !c->persistent_workers) {
            /* A new iterator spawns its worker processes (fork, imports, dataset unpickling). */
            w->alive = false;
            w->phase_ns = sim_engine_now(l->e);
            cpu_job(l, c->worker_start_ref_ns, EV_STARTED, (uint64_t)i);
        }
    }
    try_send(l);
    note_cause(l);
    return SIM_OK;
}

void sim_loader_next(sim_loader *l, uint32_t target, uint32_t kind)
{
    SIM_ASSERT(!l->waiting && l->next_yield < l->batches);
    l->waiting = true;
    l->wait_target = target;
    l->wait_kind = kind;
    if (l->main_thread) try_send(l);
    deliver(l);
    note_cause(l);
}

int sim_loader_ready_batches(const sim_loader *l)
{
    /* In order from the next one to yield: a batch ready behind a missing one cannot be taken. */
    int n = 0;
    for (int64_t b = l->next_yield; b < l->next_send && l->ready[b % l->window]; b++)
        n++;
    return n;
}

int64_t sim_loader_reads(const sim_loader *l)
{
    return l->reads;
}

int64_t sim_loader_cache_hits(const sim_loader *l)
{
    return l->hits;
}

int64_t sim_loader_decodes(const sim_loader *l)
{
    return l->decodes;
}

int sim_loader_workers(const sim_loader *l)
{
    return l->main_thread ? 0 : l->n_workers;
}

int64_t sim_loader_worker_busy_ns(const sim_loader *l, int wi)
{
    return l->w[wi].busy_ns;
}

/* Samples of this epoch's batches: all of the epoch's, or those before its cut. */
static int64_t epoch_samples(const sim_loader *l)
{
    int64_t n = l->batches * l->cfg.batch_size;
    return n < l->cfg.samples ? n : l->cfg.samples;
}

void sim_loader_cut(sim_loader *l, int64_t batches)
{
    SIM_ASSERT(batches >= l->next_send && batches <= l->batches);
    l->batches = batches;
    /* The page cache as the rest of the epoch would have left it: its misses, in order, while
     * there is room. Only the cache outlives the epoch: the shuffle and the decode draws of the
     * next epoch start where a whole epoch leaves them (see shuffle). */
    for (int64_t i = epoch_samples(l); i < l->cfg.samples && l->cached < l->cfg.cached_samples; i++)
        if (!(l->order[i] & CACHED)) {
            l->order[i] |= CACHED;
            l->cached++;
        }
}

int64_t sim_loader_sent(const sim_loader *l)
{
    return l->next_send;
}

bool sim_loader_each_sample_once(const sim_loader *l)
{
    /* Positions 0 .. n-1 of the order were each read once and nothing else was. */
    int64_t n = epoch_samples(l);
    if (l->reads != n || l->decodes != n) return false;
    for (int64_t i = 0; i < n; i++)
        if (!(l->order[i] & SEEN)) return false;
    return true;
}
