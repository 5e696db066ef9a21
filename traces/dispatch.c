/* dispatch.c — per-class CPU dispatch of a native trace (see dispatch.h).
 * A step is cut into phases by its backward thread: main-thread ops before the first autograd
 * node are the forward (from the first module op on), those after the last node ends are the
 * optimizer. Names decide the class within a phase; names no class claims (data copies, DDP
 * buffer broadcasts, zero_grad's zero_) are left out rather than guessed. */
#include "traces/dispatch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_names[TRC_DC_COUNT] = {
    [TRC_DC_FWD_GEMM] = "fwd_gemm",
    [TRC_DC_FWD_NORM] = "fwd_norm",
    [TRC_DC_FWD_ELEM] = "fwd_elem",
    [TRC_DC_FWD_PY] = "fwd_py",
    [TRC_DC_FWD_VIEW] = "fwd_view",
    [TRC_DC_BWD_GEMM] = "bwd_gemm",
    [TRC_DC_BWD_NORM] = "bwd_norm",
    [TRC_DC_BWD_NODE] = "bwd_node",
    [TRC_DC_BWD_ACCUM] = "bwd_accumulate",
    [TRC_DC_OPT_FOREACH] = "opt_foreach",
    [TRC_DC_OPT_OP] = "opt_op",
};

const char *trc_dispatch_class_name(int c)
{
    return (unsigned)c < TRC_DC_COUNT ? class_names[c] : "?";
}

/* Forward ops that an nn.Module's forward calls as its one op. */
static const char *const gemm_ops[] = {"conv1d", "conv2d", "conv3d", "linear", NULL};
static const char *const norm_ops[] = {"batch_norm",    "layer_norm", "group_norm",
                                       "instance_norm", "rms_norm",   NULL};
static const char *const elem_ops[] = {"relu",
                                       "relu_",
                                       "gelu",
                                       "silu",
                                       "silu_",
                                       "sigmoid",
                                       "tanh",
                                       "hardtanh_",
                                       "max_pool2d",
                                       "avg_pool2d",
                                       "adaptive_avg_pool2d",
                                       "dropout",
                                       "embedding",
                                       "embedding_bag",
                                       "cross_entropy_loss",
                                       "log_softmax",
                                       "nll_loss",
                                       NULL};
static const char *const view_ops[] = {
    "view",    "reshape",   "flatten",   "unsqueeze", "squeeze",      "slice",     "select",
    "permute", "transpose", "t",         "expand",    "as_strided",   "detach",    "narrow",
    "split",   "chunk",     "unflatten", "alias",     "_unsafe_view", "ones_like", NULL};

static int in_list(const char *const *list, const char *op)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(list[i], op)) return 1;
    return 0;
}

static int prefixed(const char *s, const char *p)
{
    return !strncmp(s, p, strlen(p));
}

/* Backward node names (the part before "Backward") by the class of their forward op. */
static const char *const bwd_gemm_nodes[] = {"Convolution", "CudnnConvolution", "Addmm", "Mm",
                                             "Bmm",         "Linear",           NULL};
static const char *const bwd_norm_nodes[] = {"CudnnBatchNorm",  "NativeBatchNorm", "BatchNorm",
                                             "NativeLayerNorm", "NativeGroupNorm", NULL};

static int node_in(const char *const *list, const char *node, size_t len)
{
    for (int i = 0; list[i]; i++)
        if (strlen(list[i]) == len && !strncmp(list[i], node, len)) return 1;
    return 0;
}

static int backward_class(const char *name)
{
    if (strstr(name, "AccumulateGrad")) return TRC_DC_BWD_ACCUM;
    /* Old profilers record the engine's sums of forked gradients as top-level aten::add. */
    if (!strcmp(name, "aten::add")) return TRC_DC_BWD_NODE;
    const char *b = strstr(name, "Backward");
    if (!b) return -1;
    const char *node = strrchr(name, ' ') ? strrchr(name, ' ') + 1 : name;
    size_t len = b > node ? (size_t)(b - node) : 0;
    if (node_in(bwd_gemm_nodes, node, len)) return TRC_DC_BWD_GEMM;
    if (node_in(bwd_norm_nodes, node, len)) return TRC_DC_BWD_NORM;
    return TRC_DC_BWD_NODE;
}

int trc_dispatch_class(const char *name, int thread, int phase)
{
    if (thread != 0) return backward_class(name);
    if (!prefixed(name, "aten::") || !strcmp(name, "aten::zero_")) return -1;
    const char *op = name + 6;
    if (phase == 2)
        return prefixed(op, "_foreach_") || prefixed(op, "_fused_") ? TRC_DC_OPT_FOREACH
                                                                    : TRC_DC_OPT_OP;
    /* ones_like seeds backward; the interval after it is the whole backward pass */
    if (phase != 0 || !strcmp(op, "to") || !strcmp(op, "copy_") || !strcmp(op, "ones_like"))
        return -1;
    if (in_list(gemm_ops, op)) return TRC_DC_FWD_GEMM;
    if (in_list(norm_ops, op)) return TRC_DC_FWD_NORM;
    if (in_list(elem_ops, op)) return TRC_DC_FWD_ELEM;
    if (in_list(view_ops, op)) return TRC_DC_FWD_VIEW;
    return TRC_DC_FWD_PY;
}

static int64_t rec_end(const trc_record *r)
{
    return r->cpu_start_ns + r->cpu_dur_ns;
}

/* Samples the measurement gathers, one set over all steps. */
typedef struct acc {
    trc_sample cls[TRC_DC_COUNT], count[TRC_DC_COUNT];
    int64_t launches[TRC_DC_COUNT]; /* kernel launches nested in the ops of each class */
    int64_t blocked;
    trc_sample launch, region, per_param, params;
} acc;

/* The phase boundaries of a step: the first module op of the forward, the first autograd node
 * and the end of the last one (INT64_MAX / INT64_MIN when the step has none); and the launch call
 * above which a launch counts as blocked. */
typedef struct phases {
    int64_t fwd_first, bwd_first, bwd_end;
    double blocked_ns;
} phases;

/* The launch calls of step s: their median x TRC_DISPATCH_BLOCKED into p, each into a->launch. */
static int launch_calls(const trc_step *s, phases *p, acc *a)
{
    trc_sample x = {0};
    for (size_t i = 0; i < s->n_recs; i++) {
        const trc_record *r = &s->recs[i];
        if (r->kind != TRC_REC_KERNEL || r->cpu_dur_ns <= 0) continue;
        if (trc_sample_add(&x, (double)r->cpu_dur_ns) ||
            trc_sample_add(&a->launch, (double)r->cpu_dur_ns)) {
            trc_sample_free(&x);
            return SIM_ENOMEM;
        }
    }
    trc_dist d;
    trc_sample_dist(&x, &d);
    trc_sample_free(&x);
    p->blocked_ns = d.n ? TRC_DISPATCH_BLOCKED * d.p50 : INFINITY;
    return SIM_OK;
}

static phases find_phases(const trc_step *s)
{
    phases p = {INT64_MAX, INT64_MAX, INT64_MIN, INFINITY};
    for (size_t i = 0; i < s->n_recs; i++) {
        const trc_record *r = &s->recs[i];
        if (r->kind != TRC_REC_OP || r->thread == 0) continue;
        if (backward_class(trc_step_rec_name(s, r)) < 0) continue;
        if (r->cpu_start_ns < p.bwd_first) p.bwd_first = r->cpu_start_ns;
        if (rec_end(r) > p.bwd_end) p.bwd_end = rec_end(r);
    }
    for (size_t i = 0; i < s->n_recs; i++) {
        const trc_record *r = &s->recs[i];
        if (r->kind != TRC_REC_OP || r->thread != 0 || r->cpu_start_ns >= p.bwd_first) continue;
        int c = trc_dispatch_class(trc_step_rec_name(s, r), 0, 0);
        if (c == TRC_DC_FWD_GEMM || c == TRC_DC_FWD_NORM || c == TRC_DC_FWD_ELEM) {
            p.fwd_first = r->cpu_start_ns;
            break;
        }
    }
    return p;
}

static int phase_of(const phases *p, int64_t t)
{
    if (t >= p->bwd_end) return 2;
    if (t >= p->bwd_first) return 1;
    return t >= p->fwd_first ? 0 : -1;
}

/* Per step: ops per class, the optimizer region and what of it lies outside its ops. */
typedef struct step_sums {
    int count[TRC_DC_COUNT];
    int64_t opt_last_end, opt_in_ops;
} step_sums;

/* What a top-level record held: its kernel launches and the longest launch call. */
typedef struct held {
    int launches;
    int64_t longest_ns;
} held;

/* Adds the interval of the top-level record r (next: the next top-level record on its thread). */
static int add_interval(const trc_step *s, const phases *p, const trc_record *r, held h,
                        const trc_record *next, acc *a, step_sums *ss)
{
    if (r->kind != TRC_REC_OP) return SIM_OK;
    int phase = r->thread == 0 ? phase_of(p, r->cpu_start_ns) : 1;
    int c = trc_dispatch_class(trc_step_rec_name(s, r), r->thread, phase);
    if (phase == 2) {
        if (rec_end(r) > ss->opt_last_end) ss->opt_last_end = rec_end(r);
        if (c >= 0) ss->opt_in_ops += r->cpu_dur_ns;
    }
    if (c < 0) return SIM_OK;
    ss->count[c]++;
    a->launches[c] += h.launches;
    if (!next) return SIM_OK;
    if ((double)h.longest_ns > p->blocked_ns) {
        a->blocked++;
        return SIM_OK;
    }
    return trc_sample_add(&a->cls[c], (double)(next->cpu_start_ns - r->cpu_start_ns));
}

/* Walks the top-level records of each thread (a record that starts before the current one ends
 * is nested in it) and adds every top-level op's interval. */
static int walk_step(const trc_step *s, const phases *p, acc *a, step_sums *ss)
{
    const trc_record *top[256] = {0};
    held h[256] = {{0}};
    int64_t end[256];
    for (int t = 0; t < 256; t++)
        end[t] = INT64_MIN;
    for (size_t i = 0; i < s->n_recs; i++) {
        const trc_record *r = &s->recs[i];
        int t = r->thread;
        if (r->cpu_start_ns >= end[t]) {
            if (top[t] && add_interval(s, p, top[t], h[t], r, a, ss)) return SIM_ENOMEM;
            top[t] = r;
            h[t] = (held){0};
            end[t] = rec_end(r);
        }
        if (r->kind == TRC_REC_KERNEL) {
            h[t].launches++;
            if (r->cpu_dur_ns > h[t].longest_ns) h[t].longest_ns = r->cpu_dur_ns;
        }
    }
    for (int t = 0; t < 256; t++)
        if (top[t] && add_interval(s, p, top[t], h[t], NULL, a, ss)) return SIM_ENOMEM;
    return SIM_OK;
}

static int measure_step(const trc_step *s, acc *a)
{
    phases p = find_phases(s);
    if (launch_calls(s, &p, a)) return SIM_ENOMEM;
    step_sums ss = {.opt_last_end = INT64_MIN};
    if (walk_step(s, &p, a, &ss)) return SIM_ENOMEM;
    for (int c = 0; c < TRC_DC_COUNT; c++)
        if (trc_sample_add(&a->count[c], ss.count[c])) return SIM_ENOMEM;
    int params = ss.count[TRC_DC_BWD_ACCUM];
    if (trc_sample_add(&a->params, params)) return SIM_ENOMEM;
    if (ss.opt_last_end <= p.bwd_end || params == 0) return SIM_OK;
    double region = (double)(ss.opt_last_end - p.bwd_end);
    if (trc_sample_add(&a->region, region) ||
        trc_sample_add(&a->per_param, (region - (double)ss.opt_in_ops) / params))
        return SIM_ENOMEM;
    return SIM_OK;
}

static void acc_free(acc *a)
{
    for (int c = 0; c < TRC_DC_COUNT; c++) {
        trc_sample_free(&a->cls[c]);
        trc_sample_free(&a->count[c]);
    }
    trc_sample_free(&a->launch);
    trc_sample_free(&a->region);
    trc_sample_free(&a->per_param);
    trc_sample_free(&a->params);
}

int trc_dispatch_measure(trc_reader *r, trc_dispatch *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    acc a = {0};
    const trc_step *s;
    int rc;
    while ((rc = trc_reader_next_step(r, &s, err)) == 1) {
        out->steps++;
        if (measure_step(s, &a)) {
            rc = sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory measuring dispatch");
            goto done;
        }
    }
    if (rc) goto done;
    for (int c = 0; c < TRC_DC_COUNT; c++) {
        trc_dist d;
        trc_sample_dist(&a.cls[c], &out->cls[c]);
        trc_sample_dist(&a.count[c], &d);
        out->per_step[c] = d.p50;
        int64_t ops = 0;
        for (size_t i = 0; i < a.count[c].n; i++)
            ops += (int64_t)a.count[c].v[i];
        out->launches_per_op[c] = ops ? (double)a.launches[c] / (double)ops : 0;
    }
    trc_dist d;
    trc_sample_dist(&a.params, &d);
    out->params = d.p50;
    out->blocked = a.blocked;
    trc_sample_dist(&a.launch, &out->launch_ns);
    trc_sample_dist(&a.region, &out->opt_region_ns);
    trc_sample_dist(&a.per_param, &out->opt_param_ns);
done:
    acc_free(&a);
    return rc;
}
