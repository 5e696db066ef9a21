/* program.c — native trace step to engine step program (see program.h, FORMAT.md "Replay").
 * The CPU timeline of the step is walked once in start order: the time between two actions is
 * dispatch work of the next one; waits for data, syncs and the blocked part of long launch calls
 * are taken out, because the engine simulates the loader, the drain and the launch queue. */
#include "traces/program.h"

#include "traces/stats.h"

#include <stdlib.h>
#include <string.h>

/* Launch calls up to this multiple of the step's median launch time count as CPU work: in the
 * validation traces that are not GPU-bound, p99 of cudaLaunchKernel is 1.9x (traces 1, 2),
 * 2.1x (trace 4) and 2.8x (trace 5) the median, while in the GPU-bound trace 3 p90 is 29x it
 * (the launch queue was full). */
#define LAUNCH_CAP_MULT 4
/* ...and never less than this: a launch is a few microseconds of driver work, so with a tiny
 * median a 4x cap would cut ordinary calls. */
#define LAUNCH_CAP_MIN_NS 20000

void trc_program_opts_init(trc_program_opts *o)
{
    memset(o, 0, sizeof *o);
    o->pick = TRC_PICK_MEDIAN;
}

void trc_program_info_free(trc_program_info *info)
{
    if (!info) return;
    free(info->extra);
    info->extra = NULL;
    free(info->note);
    info->note = NULL;
}

/* Appends x at index `at` of a growing array kept the size of the program. */
static int put_extra(trc_op_extra **v, size_t *cap, size_t at, const trc_op_extra *x)
{
    if (at >= *cap) {
        size_t c = *cap ? 2 * *cap : 256;
        while (c <= at)
            c *= 2;
        trc_op_extra *p = realloc(*v, c * sizeof *p);
        if (!p) return SIM_ENOMEM;
        *v = p;
        *cap = c;
    }
    (*v)[at] = *x;
    return SIM_OK;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

static int64_t median_launch(const trc_step *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_recs; i++)
        n += s->recs[i].kind == TRC_REC_KERNEL && s->recs[i].cpu_dur_ns > 0;
    if (!n) return 0;
    int64_t *v = malloc(n * sizeof *v);
    if (!v) return 0;
    size_t k = 0;
    for (size_t i = 0; i < s->n_recs; i++)
        if (s->recs[i].kind == TRC_REC_KERNEL && s->recs[i].cpu_dur_ns > 0)
            v[k++] = s->recs[i].cpu_dur_ns;
    qsort(v, n, sizeof *v, cmp_i64);
    int64_t m = v[(n - 1) / 2];
    free(v);
    return m;
}

/* The cap on a launch call's CPU work: launch_cap_ns, or derived from the step's median
 * launch (*launch) when launch_cap_ns <= 0. */
static int64_t launch_cap(const trc_step *s, int64_t launch_cap_ns, int64_t *launch)
{
    *launch = median_launch(s);
    int64_t cap = launch_cap_ns > 0 ? launch_cap_ns : LAUNCH_CAP_MULT * *launch;
    if (launch_cap_ns <= 0 && cap < LAUNCH_CAP_MIN_NS) cap = LAUNCH_CAP_MIN_NS;
    return cap;
}

/* The walk over a step's CPU timeline: where it stands and what it has set aside (ns). */
typedef struct walk {
    int64_t cap;     /* launch/copy calls count as CPU work up to this */
    int64_t cursor;  /* end of the latest action so far */
    int64_t pending; /* CPU work not yet given to an op */
    int64_t wait, sync, blocked, coll_gpu, h2d;
    int colls;
} walk;

/* A KERNEL, MEMCPY or MEMSET record: a call that issues GPU work, as op (and x's FLOPs and
 * blocks); its CPU time beyond the cap is blocked. */
static void gpu_call_op(const trc_record *r, int64_t own_span, int gpu_sms, walk *w, sim_op *op,
                        trc_op_extra *x)
{
    int64_t work = own_span < w->cap ? own_span : w->cap;
    w->pending += work;
    w->blocked += own_span - work;
    int64_t gpu = r->gpu_dur_ns > 0 ? r->gpu_dur_ns : 0;
    if (r->kind == TRC_REC_MEMCPY && r->sub == TRC_MEMCPY_H2D) {
        op->kind = SIM_OP_MEMCPY_H2D;
        op->bytes = r->bytes;
        op->pinned = r->pinned == 1;
        w->h2d += (int64_t)r->bytes;
    } else if (r->kind == TRC_REC_MEMCPY && r->sub == TRC_MEMCPY_D2H) {
        op->kind = SIM_OP_MEMCPY_D2H;
        op->bytes = r->bytes;
    } else {
        /* kernels; memsets and device-side copies run on the stream like kernels */
        op->kind = SIM_OP_KERNEL;
        op->gpu_ns = gpu;
        /* a device copy reads and writes its bytes; a memset only writes them */
        op->bytes = r->kind == TRC_REC_MEMCPY ? 2.0 * r->bytes : r->bytes;
        op->unit =
            r->kind == TRC_REC_KERNEL && r->unit != SIM_UNIT_NONE ? r->unit : SIM_UNIT_MEMORY;
        if (r->kind == TRC_REC_KERNEL && r->blocks > 0 && gpu_sms > 0 && r->blocks < gpu_sms)
            op->sm_fraction = (float)r->blocks / (float)gpu_sms;
        if (r->kind == TRC_REC_KERNEL) {
            x->flops = r->flops;
            x->blocks = r->blocks;
        }
    }
}

/* Record i of the step as op and x, advancing the walk; returns 0 when it makes no op (a wait). */
static int record_op(const trc_record *r, size_t i, int gpu_sms, walk *w, sim_op *op,
                     trc_op_extra *x)
{
    int64_t start = r->cpu_start_ns, end = r->cpu_start_ns + r->cpu_dur_ns;
    if (start > w->cursor) w->pending += start - w->cursor;
    /* the part of this record's own span not yet accounted (records may overlap) */
    int64_t own_span = end - (start > w->cursor ? start : w->cursor);
    if (own_span < 0) own_span = 0;
    if (end > w->cursor) w->cursor = end;
    memset(op, 0, sizeof *op);
    op->sm_fraction = 1.0f;
    *x = (trc_op_extra){0, 0, r->gpu_dur_ns, r->stream, (int32_t)i};
    switch (r->kind) {
    case TRC_REC_WAIT:
        w->wait += own_span;
        return 0;
    case TRC_REC_SYNC:
        w->sync += own_span;
        op->kind = SIM_OP_SYNC;
        break;
    case TRC_REC_COLLECTIVE:
        /* enqueueing a collective is CPU work of the calling thread (tens of us) */
        w->pending += own_span;
        op->kind = SIM_OP_ALLREDUCE;
        op->bytes = r->bytes;
        w->colls++;
        if (r->gpu_dur_ns > 0) w->coll_gpu += r->gpu_dur_ns;
        break;
    default:
        gpu_call_op(r, own_span, gpu_sms, w, op, x);
        break;
    }
    return 1;
}

/* The growing extras of one step's program: the array, its capacity, the program's first op. */
typedef struct extras {
    trc_op_extra *v;
    size_t cap, first_op;
} extras;

/* Appends op to out with the walk's pending CPU work as its dispatch, and x to xs (NULL: no
 * extras wanted). */
static int push_op(sim_program *out, sim_op *op, walk *w, extras *xs, const trc_op_extra *x)
{
    op->dispatch_ns = w->pending;
    w->pending = 0;
    if (sim_program_push(out, op)) return SIM_ENOMEM;
    return xs ? put_extra(&xs->v, &xs->cap, out->n_ops - 1 - xs->first_op, x) : SIM_OK;
}

/* The step's figures in info once its program is made. */
static int fill_step_info(const trc_step *s, const sim_program *out, const walk *w, int64_t launch,
                          trc_program_info *info)
{
    trc_step_stat st;
    if (trc_step_stats(s, &st)) return SIM_ENOMEM;
    info->step_index = s->index;
    info->step_ns = s->dur_ns;
    info->gpu_busy_ns = st.gpu_busy_ns;
    info->kernel_ns = st.kernel_ns;
    info->data_wait_ns = w->wait;
    info->sync_ns = w->sync;
    info->blocked_ns = w->blocked;
    info->launch_ns = launch;
    info->launch_cap_ns = w->cap;
    info->dispatch_ns = sim_program_dispatch_ns(out);
    info->h2d_bytes = w->h2d;
    info->collectives = w->colls;
    info->collective_gpu_ns = w->coll_gpu;
    info->kernels = sim_program_kernels(out);
    return SIM_OK;
}

int trc_step_to_program(const trc_step *s, int gpu_sms, int64_t launch_cap_ns, sim_program *out,
                        trc_program_info *info, trc_op_extra **extra)
{
    extras xs = {NULL, 0, out->n_ops};
    extras *xp = extra ? &xs : NULL;
    trc_op_extra x;
    sim_op op;
    int64_t launch;
    walk w = {.cap = launch_cap(s, launch_cap_ns, &launch)};
    for (size_t i = 0; i < s->n_recs; i++) {
        const trc_record *r = &s->recs[i];
        if (r->kind == TRC_REC_OP || r->kind == TRC_REC_LOADER)
            continue; /* spans around the actions below; their time shows up as gaps */
        if (record_op(r, i, gpu_sms, &w, &op, &x) && push_op(out, &op, &w, xp, &x)) goto nomem;
    }
    /* CPU work after the last action (optimizer bookkeeping, the Python loop) */
    if (s->dur_ns > w.cursor) w.pending += s->dur_ns - w.cursor;
    if (w.pending > 0) {
        memset(&op, 0, sizeof op);
        op.kind = SIM_OP_CPU;
        op.sm_fraction = 1.0f;
        x = (trc_op_extra){0, 0, -1, -1, -1};
        if (push_op(out, &op, &w, xp, &x)) goto nomem;
    }
    if (info && fill_step_info(s, out, &w, launch, info)) goto nomem;
    if (extra) {
        if (!xs.v && !(xs.v = malloc(sizeof *xs.v))) goto nomem;
        *extra = xs.v;
    }
    return SIM_OK;
nomem:
    free(xs.v);
    return SIM_ENOMEM;
}

/* One converted step, kept until the pick is known. */
typedef struct held {
    sim_program prog;
    trc_program_info info;
    trc_op_extra *extra;
    void *note; /* from opts.note */
} held;

static void fill_header_info(trc_program_info *info, const trc_header *h)
{
    snprintf(info->gpu_name, sizeof info->gpu_name, "%s", h->gpu_name);
    info->gpu_sms = h->gpu_sms;
    snprintf(info->precision, sizeof info->precision, "%s", h->precision);
    snprintf(info->source_schema, sizeof info->source_schema, "%s", h->source_schema);
    info->batch_size = h->batch_size;
    info->world_size = h->world_size;
}

/* Converts step s into a new slot of *hs (n used, cap allocated) and lets opts->note look at it. */
static int hold_step(const trc_step *s, int gpu_sms, const trc_program_opts *opts, held **hs,
                     size_t *n, size_t *cap, sim_err *err)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        held *p = realloc(*hs, c * sizeof *p);
        if (!p) return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        *hs = p;
        *cap = c;
    }
    held *h = &(*hs)[*n];
    memset(h, 0, sizeof *h);
    if (trc_step_to_program(s, gpu_sms, 0, &h->prog, &h->info, opts->extras ? &h->extra : NULL)) {
        sim_program_free(&h->prog);
        return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    (*n)++; /* held from here on: freed with the others */
    if (opts->note && opts->pick != TRC_PICK_MEAN)
        return opts->note(opts->note_ctx, s, &h->prog, h->extra, &h->note, err);
    return SIM_OK;
}

/* Reads the remaining steps of r into *hs (*n of them) that the pick may use. */
static int hold_steps(trc_reader *r, const trc_program_opts *opts, held **hs, size_t *n,
                      sim_err *err)
{
    int gpu_sms = trc_reader_header(r)->gpu_sms;
    size_t cap = 0;
    int rc;
    const trc_step *s;
    /* one program per step (a few bytes per op), so that any pick needs one pass */
    while ((rc = trc_reader_next_step(r, &s, err)) > 0) {
        if (opts->pick == TRC_PICK_INDEX && s->index != opts->step_index) continue;
        if ((rc = hold_step(s, gpu_sms, opts, hs, n, &cap, err))) return rc;
    }
    if (rc < 0) return rc;
    if (*n == 0) {
        if (opts->pick == TRC_PICK_INDEX)
            return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "the trace has no step %lld",
                               (long long)opts->step_index);
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "the trace has no steps");
    }
    return SIM_OK;
}

/* The median (*med) and the sum (*sum) of the held steps' durations. */
static int step_time_figures(const held *hs, size_t n, int64_t *med, double *sum, sim_err *err)
{
    int64_t *dur = malloc(n * sizeof *dur);
    if (!dur) return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    *sum = 0;
    for (size_t i = 0; i < n; i++) {
        dur[i] = hs[i].info.step_ns;
        *sum += (double)dur[i];
    }
    qsort(dur, n, sizeof *dur, cmp_i64);
    *med = dur[(n - 1) / 2];
    free(dur);
    return SIM_OK;
}

/* Moves the first held step lasting med into out and info (TRC_PICK_MEDIAN, TRC_PICK_INDEX). */
static void take_step(held *hs, size_t n, int64_t med, sim_program *out, trc_program_info *info)
{
    size_t pick = 0;
    for (size_t i = 0; i < n; i++)
        if (hs[i].info.step_ns == med) {
            pick = i;
            break;
        }
    *out = hs[pick].prog;
    memset(&hs[pick].prog, 0, sizeof hs[pick].prog);
    if (info) {
        *info = hs[pick].info;
        info->extra = hs[pick].extra;
        hs[pick].extra = NULL;
        info->note = hs[pick].note;
        hs[pick].note = NULL;
    }
}

/* Fails unless all held steps have the same op sequence, to be averaged position by position. */
static int check_same_ops(const held *hs, size_t n, sim_err *err)
{
    for (size_t i = 1; i < n; i++) {
        const sim_program *a = &hs[0].prog, *b = &hs[i].prog;
        size_t k = 0;
        while (k < a->n_ops && k < b->n_ops && a->ops[k].kind == b->ops[k].kind)
            k++;
        if (k < a->n_ops || k < b->n_ops)
            return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                               "steps %lld and %lld differ at op %zu (%zu and %zu ops): they "
                               "cannot be averaged; use the median step",
                               (long long)hs[0].info.step_index, (long long)hs[i].info.step_index,
                               k, a->n_ops, b->n_ops);
    }
    return SIM_OK;
}

/* Averages op k of all held steps into hs[0]'s program and extras. */
static void average_op(held *hs, size_t n, size_t k)
{
    sim_program *p = &hs[0].prog;
    double d = 0, g = 0, by = 0, sm = 0;
    for (size_t i = 0; i < n; i++) {
        const sim_op *o = &hs[i].prog.ops[k];
        d += (double)o->dispatch_ns;
        g += (double)o->gpu_ns;
        by += o->bytes;
        sm += o->sm_fraction;
    }
    p->ops[k].dispatch_ns = (int64_t)(d / (double)n + 0.5);
    p->ops[k].gpu_ns = (int64_t)(g / (double)n + 0.5);
    p->ops[k].bytes = by / (double)n;
    p->ops[k].sm_fraction = (float)(sm / (double)n);
    if (hs[0].extra) {
        double fl = 0, rg = 0;
        for (size_t i = 0; i < n; i++) {
            fl += hs[i].extra[k].flops;
            rg += (double)hs[i].extra[k].recorded_gpu_ns;
        }
        hs[0].extra[k].flops = fl / (double)n;
        hs[0].extra[k].recorded_gpu_ns = (int64_t)(rg / (double)n + 0.5);
    }
}

/* The held steps' figures averaged into info (TRC_PICK_MEAN), with hs[0]'s averaged extras. */
static void average_info(held *hs, size_t n, trc_program_info *info)
{
    trc_program_info m = hs[0].info;
#define MEAN(f)                                                                                    \
    do {                                                                                           \
        double acc = 0;                                                                            \
        for (size_t i = 0; i < n; i++)                                                             \
            acc += (double)hs[i].info.f;                                                           \
        m.f = (int64_t)(acc / (double)n + 0.5);                                                    \
    } while (0)
    MEAN(step_ns);
    MEAN(gpu_busy_ns);
    MEAN(kernel_ns);
    MEAN(data_wait_ns);
    MEAN(sync_ns);
    MEAN(blocked_ns);
    MEAN(launch_ns);
    MEAN(h2d_bytes);
    MEAN(collective_gpu_ns);
#undef MEAN
    m.step_index = -1;
    m.dispatch_ns = sim_program_dispatch_ns(&hs[0].prog);
    m.extra = hs[0].extra;
    hs[0].extra = NULL;
    *info = m;
}

/* Averages all held steps into out and info (TRC_PICK_MEAN). */
static int take_mean(held *hs, size_t n, sim_program *out, trc_program_info *info, sim_err *err)
{
    int rc = check_same_ops(hs, n, err);
    if (rc) return rc;
    for (size_t k = 0; k < hs[0].prog.n_ops; k++)
        average_op(hs, n, k);
    if (info) average_info(hs, n, info);
    *out = hs[0].prog;
    memset(&hs[0].prog, 0, sizeof hs[0].prog);
    return SIM_OK;
}

int trc_trace_to_program(trc_reader *r, const trc_program_opts *opts, sim_program *out,
                         trc_program_info *info, sim_err *err)
{
    trc_program_opts defaults;
    trc_program_opts_init(&defaults);
    if (!opts) opts = &defaults;
    held *hs = NULL;
    size_t n = 0;
    int64_t med = 0;
    double sum = 0;
    int rc = hold_steps(r, opts, &hs, &n, err);
    if (rc || (rc = step_time_figures(hs, n, &med, &sum, err))) goto done;
    if (opts->pick != TRC_PICK_MEAN)
        take_step(hs, n, med, out, info);
    else if ((rc = take_mean(hs, n, out, info, err)))
        goto done;
    if (info) {
        fill_header_info(info, trc_reader_header(r));
        info->pick = opts->pick;
        info->steps = (int)n;
        info->step_ns_median = med;
        info->step_ns_mean = (int64_t)(sum / (double)n + 0.5);
    }
done:
    for (size_t i = 0; i < n; i++) {
        sim_program_free(&hs[i].prog);
        free(hs[i].extra);
        free(hs[i].note);
    }
    free(hs);
    return rc;
}

int trc_trace_file_to_program(const char *path, const trc_program_opts *opts, sim_program *out,
                              trc_program_info *info, sim_err *err)
{
    trc_reader *r = NULL;
    int rc = trc_reader_open(path, &r, err);
    if (rc) return rc;
    rc = trc_trace_to_program(r, opts, out, info, err);
    if (rc && err && !err->where[0]) snprintf(err->where, sizeof err->where, "%s", path);
    trc_reader_close(r);
    return rc;
}
