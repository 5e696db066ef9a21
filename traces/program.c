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
    if (!info)
        return;
    free(info->extra);
    info->extra = NULL;
}

/* Appends x at index `at` of a growing array kept the size of the program. */
static int put_extra(trc_op_extra **v, size_t *cap, size_t at, const trc_op_extra *x)
{
    if (at >= *cap) {
        size_t c = *cap ? 2 * *cap : 256;
        while (c <= at)
            c *= 2;
        trc_op_extra *p = realloc(*v, c * sizeof *p);
        if (!p)
            return SIM_ENOMEM;
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
    if (!n)
        return 0;
    int64_t *v = malloc(n * sizeof *v);
    if (!v)
        return 0;
    size_t k = 0;
    for (size_t i = 0; i < s->n_recs; i++)
        if (s->recs[i].kind == TRC_REC_KERNEL && s->recs[i].cpu_dur_ns > 0)
            v[k++] = s->recs[i].cpu_dur_ns;
    qsort(v, n, sizeof *v, cmp_i64);
    int64_t m = v[(n - 1) / 2];
    free(v);
    return m;
}

int trc_step_to_program(const trc_step *s, int gpu_sms, int64_t launch_cap_ns, sim_program *out,
                        trc_program_info *info, trc_op_extra **extra)
{
    trc_op_extra *xv = NULL;
    size_t xcap = 0;
    size_t first_op = out->n_ops;
    trc_op_extra x;
    int64_t launch = median_launch(s);
    int64_t cap = launch_cap_ns > 0 ? launch_cap_ns : LAUNCH_CAP_MULT * launch;
    if (launch_cap_ns <= 0 && cap < LAUNCH_CAP_MIN_NS)
        cap = LAUNCH_CAP_MIN_NS;
    int64_t cursor = 0, pending = 0, wait = 0, sync = 0, blocked = 0, coll_gpu = 0, h2d = 0;
    int colls = 0;
    for (size_t i = 0; i < s->n_recs; i++) {
        const trc_record *r = &s->recs[i];
        if (r->kind == TRC_REC_OP || r->kind == TRC_REC_LOADER)
            continue; /* spans around the actions below; their time shows up as gaps */
        int64_t start = r->cpu_start_ns, end = r->cpu_start_ns + r->cpu_dur_ns;
        if (start > cursor)
            pending += start - cursor;
        /* the part of this record's own span not yet accounted (records may overlap) */
        int64_t own_span = end - (start > cursor ? start : cursor);
        if (own_span < 0)
            own_span = 0;
        if (end > cursor)
            cursor = end;
        sim_op op;
        memset(&op, 0, sizeof op);
        op.sm_fraction = 1.0f;
        int emit = 1;
        x = (trc_op_extra){0, 0, r->gpu_dur_ns, r->stream, (int32_t)i};
        switch (r->kind) {
        case TRC_REC_WAIT:
            wait += own_span;
            emit = 0;
            break;
        case TRC_REC_SYNC:
            sync += own_span;
            op.kind = SIM_OP_SYNC;
            break;
        case TRC_REC_COLLECTIVE:
            /* enqueueing a collective is CPU work of the calling thread (tens of us) */
            pending += own_span;
            op.kind = SIM_OP_ALLREDUCE;
            op.bytes = r->bytes;
            colls++;
            if (r->gpu_dur_ns > 0)
                coll_gpu += r->gpu_dur_ns;
            break;
        default: { /* KERNEL, MEMCPY, MEMSET: a call that issues GPU work */
            int64_t work = own_span < cap ? own_span : cap;
            pending += work;
            blocked += own_span - work;
            int64_t gpu = r->gpu_dur_ns > 0 ? r->gpu_dur_ns : 0;
            if (r->kind == TRC_REC_MEMCPY && r->sub == TRC_MEMCPY_H2D) {
                op.kind = SIM_OP_MEMCPY_H2D;
                op.bytes = r->bytes;
                op.pinned = r->pinned == 1;
                h2d += (int64_t)r->bytes;
            } else if (r->kind == TRC_REC_MEMCPY && r->sub == TRC_MEMCPY_D2H) {
                op.kind = SIM_OP_MEMCPY_D2H;
                op.bytes = r->bytes;
            } else {
                /* kernels; memsets and device-side copies run on the stream like kernels */
                op.kind = SIM_OP_KERNEL;
                op.gpu_ns = gpu;
                /* a device copy reads and writes its bytes; a memset only writes them */
                op.bytes = r->kind == TRC_REC_MEMCPY ? 2.0 * r->bytes : r->bytes;
                op.unit = r->kind == TRC_REC_KERNEL && r->unit != SIM_UNIT_NONE ? r->unit
                                                                               : SIM_UNIT_MEMORY;
                if (r->kind == TRC_REC_KERNEL && r->blocks > 0 && gpu_sms > 0 &&
                    r->blocks < gpu_sms)
                    op.sm_fraction = (float)r->blocks / (float)gpu_sms;
                if (r->kind == TRC_REC_KERNEL) {
                    x.flops = r->flops;
                    x.blocks = r->blocks;
                }
            }
            break;
        }
        }
        if (!emit)
            continue;
        op.dispatch_ns = pending;
        pending = 0;
        if (sim_program_push(out, &op) ||
            (extra && put_extra(&xv, &xcap, out->n_ops - 1 - first_op, &x)))
            goto nomem;
    }
    /* CPU work after the last action (optimizer bookkeeping, the Python loop) */
    if (s->dur_ns > cursor)
        pending += s->dur_ns - cursor;
    if (pending > 0) {
        sim_op op;
        memset(&op, 0, sizeof op);
        op.kind = SIM_OP_CPU;
        op.dispatch_ns = pending;
        op.sm_fraction = 1.0f;
        x = (trc_op_extra){0, 0, -1, -1, -1};
        if (sim_program_push(out, &op) ||
            (extra && put_extra(&xv, &xcap, out->n_ops - 1 - first_op, &x)))
            goto nomem;
    }
    if (info) {
        trc_step_stat st;
        if (trc_step_stats(s, &st))
            goto nomem;
        info->step_index = s->index;
        info->step_ns = s->dur_ns;
        info->gpu_busy_ns = st.gpu_busy_ns;
        info->kernel_ns = st.kernel_ns;
        info->data_wait_ns = wait;
        info->sync_ns = sync;
        info->blocked_ns = blocked;
        info->launch_ns = launch;
        info->launch_cap_ns = cap;
        info->dispatch_ns = sim_program_dispatch_ns(out);
        info->h2d_bytes = h2d;
        info->collectives = colls;
        info->collective_gpu_ns = coll_gpu;
        info->kernels = sim_program_kernels(out);
    }
    if (extra) {
        if (!xv && !(xv = malloc(sizeof *xv)))
            goto nomem;
        *extra = xv;
    }
    return SIM_OK;
nomem:
    free(xv);
    return SIM_ENOMEM;
}

typedef struct held {
    sim_program prog;
    trc_program_info info;
    trc_op_extra *extra;
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

int trc_trace_to_program(trc_reader *r, const trc_program_opts *opts, sim_program *out,
                         trc_program_info *info, sim_err *err)
{
    trc_program_opts defaults;
    trc_program_opts_init(&defaults);
    if (!opts)
        opts = &defaults;
    const trc_header *h = trc_reader_header(r);
    held *hs = NULL;
    size_t n = 0, cap = 0;
    int rc;
    const trc_step *s;
    /* one program per step (a few bytes per op), so that any pick needs one pass */
    while ((rc = trc_reader_next_step(r, &s, err)) > 0) {
        if (opts->pick == TRC_PICK_INDEX && s->index != opts->step_index)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            held *p = realloc(hs, cap * sizeof *p);
            if (!p) {
                rc = sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
                goto done;
            }
            hs = p;
        }
        memset(&hs[n], 0, sizeof hs[n]);
        if (trc_step_to_program(s, h->gpu_sms, 0, &hs[n].prog, &hs[n].info,
                                opts->extras ? &hs[n].extra : NULL)) {
            sim_program_free(&hs[n].prog);
            rc = sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
            goto done;
        }
        n++;
    }
    if (rc < 0)
        goto done;
    if (n == 0) {
        if (opts->pick == TRC_PICK_INDEX)
            rc = sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "the trace has no step %lld",
                             (long long)opts->step_index);
        else
            rc = sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "the trace has no steps");
        goto done;
    }
    /* step-time figures over all steps read */
    int64_t *dur = malloc(n * sizeof *dur);
    if (!dur) {
        rc = sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto done;
    }
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        dur[i] = hs[i].info.step_ns;
        sum += (double)dur[i];
    }
    qsort(dur, n, sizeof *dur, cmp_i64);
    int64_t med = dur[(n - 1) / 2];
    free(dur);
    size_t pick = 0;
    if (opts->pick != TRC_PICK_MEAN) {
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
        }
    } else {
        /* all steps must have the same op sequence to be averaged position by position */
        for (size_t i = 1; i < n; i++) {
            const sim_program *a = &hs[0].prog, *b = &hs[i].prog;
            size_t k = 0;
            while (k < a->n_ops && k < b->n_ops && a->ops[k].kind == b->ops[k].kind)
                k++;
            if (k < a->n_ops || k < b->n_ops) {
                rc = sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                                 "steps %lld and %lld differ at op %zu (%zu and %zu ops): they "
                                 "cannot be averaged; use the median step",
                                 (long long)hs[0].info.step_index,
                                 (long long)hs[i].info.step_index, k, a->n_ops, b->n_ops);
                goto done;
            }
        }
        sim_program *p = &hs[0].prog;
        for (size_t k = 0; k < p->n_ops; k++) {
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
        if (info) {
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
            m.dispatch_ns = sim_program_dispatch_ns(p);
            m.extra = hs[0].extra;
            hs[0].extra = NULL;
            *info = m;
        }
        *out = *p;
        memset(p, 0, sizeof *p);
    }
    if (info) {
        fill_header_info(info, h);
        info->pick = opts->pick;
        info->steps = (int)n;
        info->step_ns_median = med;
        info->step_ns_mean = (int64_t)(sum / (double)n + 0.5);
    }
    rc = SIM_OK;
done:
    for (size_t i = 0; i < n; i++) {
        sim_program_free(&hs[i].prog);
        free(hs[i].extra);
    }
    free(hs);
    return rc;
}

int trc_trace_file_to_program(const char *path, const trc_program_opts *opts, sim_program *out,
                              trc_program_info *info, sim_err *err)
{
    trc_reader *r = NULL;
    int rc = trc_reader_open(path, &r, err);
    if (rc)
        return rc;
    rc = trc_trace_to_program(r, opts, out, info, err);
    if (rc && err && !err->where[0])
        snprintf(err->where, sizeof err->where, "%s", path);
    trc_reader_close(r);
    return rc;
}
