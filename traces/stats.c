/* stats.c — per-step figures and duration distributions of native trace steps (see stats.h).
 * GPU busy time is the union of intervals over all streams, as nvidia-smi's GPU-Util counts a
 * moment busy when any kernel or copy runs, not the sum of kernel durations. */
#include "traces/stats.h"

#include "sim/base/err.h"
#include "sim/core/workload.h"

#include <gsl/gsl_statistics_double.h>
#include <stdlib.h>
#include <string.h>

typedef struct span {
    int64_t a, b;
} span;

static int cmp_span(const void *x, const void *y)
{
    const span *p = x, *q = y;
    return p->a < q->a ? -1 : p->a > q->a ? 1 : (p->b < q->b ? -1 : p->b > q->b);
}

/* Adds record r to the counts in o (*wait_end: end of the latest data wait so far); returns 1
 * when r is GPU work, whose interval counts towards GPU busy. */
static int count_record(const trc_record *r, trc_step_stat *o, int64_t *wait_end)
{
    switch (r->kind) {
    case TRC_REC_OP:
        o->ops++;
        o->op_cpu_ns += r->cpu_dur_ns;
        break;
    case TRC_REC_KERNEL:
        o->kernels++;
        o->launch_cpu_ns += r->cpu_dur_ns;
        if (r->gpu_dur_ns > 0) {
            o->kernel_ns += r->gpu_dur_ns;
            if (r->unit == SIM_UNIT_TENSOR)
                o->tensor_kernel_ns += r->gpu_dur_ns;
            else if (r->unit == SIM_UNIT_CUDA)
                o->cuda_kernel_ns += r->gpu_dur_ns;
        }
        if (r->flops > 0) {
            o->flops += r->flops;
            o->kernels_with_flops++;
        }
        return 1;
    case TRC_REC_MEMCPY:
        o->memcpys++;
        if (r->gpu_dur_ns > 0) o->memcpy_ns += r->gpu_dur_ns;
        if (r->sub == TRC_MEMCPY_H2D) o->h2d_bytes += (int64_t)r->bytes;
        return 1;
    case TRC_REC_MEMSET:
        o->memsets++;
        return 1;
    case TRC_REC_SYNC:
        o->syncs++;
        o->sync_ns += r->cpu_dur_ns;
        break;
    case TRC_REC_WAIT:
        /* records are in start order, so a wait inside another starts before it ends */
        if (r->cpu_start_ns >= *wait_end) {
            o->data_wait_ns += r->cpu_dur_ns;
            *wait_end = r->cpu_start_ns + r->cpu_dur_ns;
        } else if (r->cpu_start_ns + r->cpu_dur_ns > *wait_end) {
            o->data_wait_ns += r->cpu_start_ns + r->cpu_dur_ns - *wait_end;
            *wait_end = r->cpu_start_ns + r->cpu_dur_ns;
        }
        break;
    case TRC_REC_COLLECTIVE:
        o->collectives++;
        o->collective_bytes += (int64_t)r->bytes;
        if (r->gpu_dur_ns > 0) o->collective_gpu_ns += r->gpu_dur_ns;
        return 1;
    default:
        break;
    }
    return 0;
}

/* GPU busy (the union of the n intervals sp[], sorted here), first start and last end into o. */
static void gpu_span_figures(span *sp, size_t n, trc_step_stat *o)
{
    qsort(sp, n, sizeof *sp, cmp_span);
    int64_t a = sp[0].a, b = sp[0].b, last = sp[0].b;
    o->gpu_first_ns = sp[0].a;
    for (size_t i = 1; i < n; i++) {
        if (sp[i].a > b) {
            o->gpu_busy_ns += b - a;
            a = sp[i].a;
            b = sp[i].b;
        } else if (sp[i].b > b) {
            b = sp[i].b;
        }
        if (sp[i].b > last) last = sp[i].b;
    }
    o->gpu_busy_ns += b - a;
    o->gpu_last_ns = last;
}

int trc_step_stats(const trc_step *s, trc_step_stat *o)
{
    memset(o, 0, sizeof *o);
    o->index = s->index;
    o->step_ns = s->dur_ns;
    span *sp = malloc((s->n_recs ? s->n_recs : 1) * sizeof *sp);
    if (!sp) return SIM_ENOMEM;
    size_t n = 0;
    int64_t wait_end = INT64_MIN;
    for (size_t i = 0; i < s->n_recs; i++) {
        const trc_record *r = &s->recs[i];
        if (count_record(r, o, &wait_end) && r->gpu_dur_ns >= 0) {
            sp[n].a = r->gpu_start_ns;
            sp[n].b = r->gpu_start_ns + r->gpu_dur_ns;
            n++;
        }
    }
    if (n) gpu_span_figures(sp, n, o);
    free(sp);
    return SIM_OK;
}

int trc_sample_add(trc_sample *s, double v)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        double *p = realloc(s->v, cap * sizeof *p);
        if (!p) return SIM_ENOMEM;
        s->v = p;
        s->cap = cap;
    }
    s->v[s->n++] = v;
    return SIM_OK;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

void trc_sample_dist(trc_sample *s, trc_dist *d)
{
    memset(d, 0, sizeof *d);
    if (!s->n) return;
    qsort(s->v, s->n, sizeof *s->v, cmp_double);
    d->n = (int64_t)s->n;
    d->mean = gsl_stats_mean(s->v, 1, s->n);
    d->p50 = gsl_stats_quantile_from_sorted_data(s->v, 1, s->n, 0.50);
    d->p90 = gsl_stats_quantile_from_sorted_data(s->v, 1, s->n, 0.90);
    d->p99 = gsl_stats_quantile_from_sorted_data(s->v, 1, s->n, 0.99);
    d->max = s->v[s->n - 1];
}

void trc_sample_free(trc_sample *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}

int trc_step_sample_cpu(const trc_step *s, trc_sample *launch_ns, trc_sample *op_ns)
{
    for (size_t i = 0; i < s->n_recs; i++) {
        const trc_record *r = &s->recs[i];
        int rc = SIM_OK;
        if (r->kind == TRC_REC_KERNEL && launch_ns && r->cpu_dur_ns > 0)
            rc = trc_sample_add(launch_ns, (double)r->cpu_dur_ns);
        else if (r->kind == TRC_REC_OP && op_ns)
            rc = trc_sample_add(op_ns, (double)r->cpu_dur_ns);
        if (rc) return rc;
    }
    return SIM_OK;
}
