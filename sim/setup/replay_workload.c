/* replay_workload.c — a recorded trace replayed on simulated hardware (see replay_workload.h and
 * docs/replay.md). The median step of the trace becomes the program (traces/program.h); this file
 * resolves the source GPU and CPU, rescales dispatch, kernels, copies and collectives to the target
 * machine and the experiment's batch size, and folds side-stream overlap into the one simulated
 * stream. The trace is read once: what the program does not carry (annotate) is taken from each
 * step's records as the reader passes them (trc_program_opts.note). */
#include "sim/setup/replay_workload.h"

#include "models/cost.h"
#include "sim/setup/catalog.h"
#include "sim/base/outfile.h"
#include "traces/kclass.h"
#include "traces/kineto.h"
#include "traces/program.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- source hardware --------------------------------------------------------------------- */

/* Names the normalisation below cannot turn into a catalog key. Each is the same silicon at the
 * same clocks and bandwidth as the entry named:
 * - DGX Station V100 ("V100-DGXS"): four V100 SXM2 modules (GV100, 80 SMs, 1530 MHz boost,
 *   900 GB/s), 500 tensor TFLOPS in all = 4 x 125 as the SXM2 part (NVIDIA DGX Station data
 *   sheet, recalled); the trace header confirms 80 SMs, cc 7.0.
 * - "A100-PG509-200": the board name PG509 is NVIDIA's A100 SXM4 board (HGX A100); -200 is the
 *   40 GB variant (the HTA traces' deviceProperties give 108 SMs and 40 GB).
 * - H100/H200 SXM report "NVIDIA H100 80GB HBM3" / "NVIDIA H200". */
static const struct {
    const char *contains, *entry;
} gpu_alias[] = {
    {"V100-DGXS-32GB", "v100-sxm2-32gb"}, {"V100-DGXS-16GB", "v100-sxm2-16gb"},
    {"A100-PG509-200", "a100-sxm4-40gb"}, {"H100 80GB HBM3", "h100-sxm5-80gb"},
    {"H100 PCIe", "h100-pcie-80gb"},      {"A100 80GB PCIe", "a100-pcie-80gb"},
    {"H200", "h200-sxm-141gb"},
};

int trc_replay_gpu_candidate(const char *gpu_name, char *out)
{
    for (size_t i = 0; i < sizeof gpu_alias / sizeof gpu_alias[0]; i++)
        if (strstr(gpu_name, gpu_alias[i].contains)) {
            snprintf(out, SIM_NAME_MAX, "%s", gpu_alias[i].entry);
            return 1;
        }
    /* "Tesla V100-SXM2-32GB" -> "v100-sxm2-32gb", "NVIDIA GeForce RTX 4090" -> "rtx-4090" */
    static const char *const drop[] = {"nvidia ", "tesla ", "geforce ", "quadro "};
    char low[TRC_STR_MAX];
    size_t n = 0;
    for (const char *s = gpu_name; *s && n + 1 < sizeof low; s++)
        low[n++] = (char)tolower((unsigned char)*s);
    low[n] = 0;
    const char *p = low;
    for (int again = 1; again;) {
        again = 0;
        for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++)
            if (!strncmp(p, drop[i], strlen(drop[i]))) {
                p += strlen(drop[i]);
                again = 1;
            }
    }
    size_t o = 0;
    for (; *p && o + 1 < SIM_NAME_MAX; p++)
        out[o++] = *p == ' ' || *p == '_' ? '-' : *p;
    out[o] = 0;
    return 0;
}

const char *trc_replay_cpu_guess(const char *gpu_name, const char **why)
{
    /* Kineto traces do not record the CPU. Guesses only where the GPU name pins the box. */
    if (strstr(gpu_name, "V100-DGXS")) {
        *why = "guess: a DGX Station V100 (the GPU name says DGXS) has one Xeon E5-2698 v4";
        return "xeon-e5-2698-v4";
    }
    if (strstr(gpu_name, "V100-SXM2")) {
        *why = "guess: V100 SXM2 boxes (DGX-1) have Xeon E5-2698 v4 hosts";
        return "xeon-e5-2698-v4";
    }
    *why = "";
    return NULL;
}

/* ---- one kernel on another GPU ----------------------------------------------------------- */

static int64_t model_ns(const mdl_kernel *k, const sim_gpu_desc *g, sim_precision p)
{
    return mdl_kernel_time_ns(k, g, p);
}

int64_t trc_replay_kernel_ns(int64_t rec_ns, sim_unit unit, int conv, double flops, double bytes,
                             int64_t blocks, const sim_gpu_desc *src, const sim_gpu_desc *dst,
                             sim_precision p, double work_ratio)
{
    if (rec_ns <= 0 || unit == SIM_UNIT_NONE) return rec_ns;
    if (!strcmp(src->name, dst->name) && work_ratio == 1.0) return rec_ns;
    mdl_kernel k = {
        .kind = SIM_OP_KERNEL,
        .math = unit == SIM_UNIT_MEMORY ? MDL_MATH_SIMT
                : conv                  ? MDL_MATH_CONV
                                        : MDL_MATH_GEMM,
        /* unknown grid: so many blocks that the last wave's idle SMs do not matter */
        .blocks = blocks > 0 ? (double)blocks : 1e9,
        .flops = flops > 0 ? flops : 0,
        .bytes = bytes > 0 ? bytes : 0,
    };
    int compute = unit != SIM_UNIT_MEMORY;
    if (compute ? !(flops > 0) : !(bytes > 0)) {
        /* Unknown work: the amount that takes rec_ns on the source GPU's roofline (bisection on
         * log10 of the work; time grows with work). None when rec_ns is all fixed overhead. */
        double *w = compute ? &k.flops : &k.bytes;
        *w = 0;
        if (model_ns(&k, src, p) < rec_ns) {
            double lo = 0, hi = 18;
            for (int i = 0; i < 60; i++) {
                double mid = (lo + hi) / 2;
                *w = pow(10, mid);
                if (model_ns(&k, src, p) < rec_ns)
                    lo = mid;
                else
                    hi = mid;
            }
            *w = pow(10, (lo + hi) / 2);
        }
    }
    double t_src = (double)model_ns(&k, src, p);
    k.flops *= work_ratio;
    k.bytes *= work_ratio;
    double t_dst = (double)model_ns(&k, dst, p);
    /* The ratio keeps what the recording measured beyond the model (its calibration). */
    double t = t_src > 0 ? (double)rec_ns * t_dst / t_src : (double)rec_ns;
    return t < 1 ? 1 : (int64_t)llround(t);
}

/* ---- the trace's step -------------------------------------------------------------------- */

/* Whether s contains needle (lower case, not empty) in any case. */
static int has_ci(const char *s, const char *needle)
{
    size_t m = strlen(needle);
    for (; *s; s++) /* the first letter first: annotate runs on every record of every step */
        if (tolower((unsigned char)*s) == needle[0] && !strncasecmp(s, needle, m)) return 1;
    return 0;
}

static int is_optimizer_name(const char *name)
{
    return has_ci(name, "optimizer") || has_ci(name, "zero_grad");
}

typedef struct span {
    int64_t a, b;
} span;

static int cmp_span(const void *x, const void *y)
{
    const span *p = x, *q = y;
    return (p->a > q->a) - (p->a < q->a);
}

/* Length of [a, b) covered by the sorted, merged spans u[0..n). */
static int64_t covered(const span *u, size_t n, int64_t a, int64_t b)
{
    int64_t c = 0;
    for (size_t i = 0; i < n && u[i].a < b; i++) {
        int64_t s = u[i].a > a ? u[i].a : a, e = u[i].b < b ? u[i].b : b;
        if (e > s) c += e - s;
    }
    return c;
}

/* Sorts and merges spans in place; returns the new count. */
static size_t merge(span *u, size_t n)
{
    if (!n) return 0;
    qsort(u, n, sizeof *u, cmp_span);
    size_t o = 0;
    for (size_t i = 1; i < n; i++) {
        if (u[i].a <= u[o].b) {
            if (u[i].b > u[o].b) u[o].b = u[i].b;
        } else {
            u[++o] = u[i];
        }
    }
    return o + 1;
}

/* Main stream: the one with the most recorded kernel time. */
static int main_stream_of(const sim_program *p, const trc_op_extra *ex)
{
    enum { MAX_STREAMS = 64 };
    int id[MAX_STREAMS];
    int64_t ns[MAX_STREAMS];
    int n = 0, best = -1;
    for (size_t i = 0; i < p->n_ops; i++) {
        if (p->ops[i].kind != SIM_OP_KERNEL || ex[i].stream < 0) continue;
        int k = 0;
        while (k < n && id[k] != ex[i].stream)
            k++;
        if (k == n) {
            if (n == MAX_STREAMS) continue;
            id[n] = ex[i].stream;
            ns[n++] = 0;
        }
        ns[k] += p->ops[i].gpu_ns;
    }
    for (int k = 0; k < n; k++)
        if (best < 0 || ns[k] > ns[best]) best = k;
    return best < 0 ? -1 : id[best];
}

/* Per op of the program: what the step's records say beyond trc_op_extra. */
typedef struct op_note {
    int conv;       /* a conv kernel (cuDNN rules) rather than a GEMM */
    int fixed;      /* launched inside the optimizer / zero_grad: work does not scale with
                       batch */
    double bytes;   /* the record's bytes estimate (KERNEL) */
    double exposed; /* share of its recorded GPU time not overlapped by other GPU work
                       (side streams only; 1 on the main stream) */
} op_note;

/* What annotate finds in one step's records: one block per step (trc_step_note_fn). */
typedef struct step_note {
    int main_stream;
    int64_t side_stream_ns; /* recorded GPU time of side-stream ops */
    int64_t side_hidden_ns; /* the part of it that overlapped other GPU work */
    op_note op[];           /* one per op of the step's program */
} step_note;

/* The step's spans: the optimizer's CPU time (opt) and the main stream's GPU time (u, merged). */
static void step_spans(const trc_step *s, int main_stream, span *opt, size_t *n_opt, span *u,
                       size_t *n_u)
{
    for (size_t i = 0; i < s->n_recs; i++) {
        const trc_record *rec = &s->recs[i];
        if (rec->kind == TRC_REC_OP && is_optimizer_name(trc_step_rec_name(s, rec)))
            opt[(*n_opt)++] = (span){rec->cpu_start_ns, rec->cpu_start_ns + rec->cpu_dur_ns};
        if (rec->gpu_dur_ns > 0 && rec->stream == main_stream)
            u[(*n_u)++] = (span){rec->gpu_start_ns, rec->gpu_start_ns + rec->gpu_dur_ns};
    }
    *n_u = merge(u, *n_u);
}

/* Op i's note from its record; appends i to side[] when it ran on a side stream. */
static void note_op(const trc_step *s, const trc_op_extra *ex, size_t i, int main_stream,
                    const span *opt, size_t n_opt, op_note *nt, size_t *side, size_t *n_side)
{
    nt->exposed = 1;
    if (ex->record < 0 || (size_t)ex->record >= s->n_recs) return;
    const trc_record *rec = &s->recs[ex->record];
    nt->conv = trc_kernel_is_conv(trc_step_rec_name(s, rec));
    nt->bytes = rec->bytes;
    for (size_t k = 0; k < n_opt; k++)
        if (rec->cpu_start_ns >= opt[k].a && rec->cpu_start_ns < opt[k].b) nt->fixed = 1;
    if (rec->kind == TRC_REC_COLLECTIVE)
        nt->fixed = 1; /* gradient bytes do not grow with the batch */
    if (ex->stream >= 0 && ex->stream != main_stream && rec->gpu_dur_ns > 0) side[(*n_side)++] = i;
}

/* Side-stream ops in GPU start order: each keeps the part of its interval that neither the main
 * stream nor an earlier side-stream op covered, so the kept parts and the main stream add up to
 * the recorded union (GPU busy). u[] holds the merged main-stream spans and room for the rest. */
static void expose_side_ops(const trc_step *s, const trc_op_extra *extra, size_t *side,
                            size_t n_side, span *u, size_t n_u, step_note *note)
{
    for (size_t a = 1; a < n_side; a++) /* insertion sort by GPU start: few side ops */
        for (size_t b = a; b > 0; b--) {
            const trc_record *p = &s->recs[extra[side[b - 1]].record];
            const trc_record *q = &s->recs[extra[side[b]].record];
            if (p->gpu_start_ns <= q->gpu_start_ns) break;
            size_t t = side[b - 1];
            side[b - 1] = side[b];
            side[b] = t;
        }
    for (size_t j = 0; j < n_side; j++) {
        const trc_record *rec = &s->recs[extra[side[j]].record];
        int64_t a = rec->gpu_start_ns, b = a + rec->gpu_dur_ns;
        int64_t hid = covered(u, n_u, a, b);
        note->op[side[j]].exposed = 1.0 - (double)hid / (double)rec->gpu_dur_ns;
        note->side_stream_ns += rec->gpu_dur_ns;
        note->side_hidden_ns += hid;
        u[n_u++] = (span){a, b};
        n_u = merge(u, n_u);
    }
}

/* trc_step_note_fn: the step_note of one step of the trace, from its records. */
static int annotate(void *ctx, const trc_step *s, const sim_program *prog,
                    const trc_op_extra *extra, void **out, sim_err *err)
{
    (void)ctx;
    step_note *note = calloc(1, sizeof *note + prog->n_ops * sizeof note->op[0]);
    span *opt = malloc((s->n_recs + 1) * sizeof *opt);
    span *u = malloc((s->n_recs + prog->n_ops + 1) * sizeof *u);
    size_t *side = malloc((prog->n_ops + 1) * sizeof *side);
    if (!note || !opt || !u || !side) {
        free(note);
        free(opt);
        free(u);
        free(side);
        return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    note->main_stream = main_stream_of(prog, extra);
    size_t n_opt = 0, n_u = 0, n_side = 0;
    step_spans(s, note->main_stream, opt, &n_opt, u, &n_u);
    for (size_t i = 0; i < prog->n_ops; i++)
        note_op(s, &extra[i], i, note->main_stream, opt, n_opt, &note->op[i], side, &n_side);
    expose_side_ops(s, extra, side, n_side, u, n_u, note);
    free(u);
    free(side);
    free(opt);
    *out = note;
    return SIM_OK;
}

/* ---- the program ------------------------------------------------------------------------- */

static int prefixed(int rc, const char *key, sim_err *err)
{
    if (rc && err && strncmp(err->msg, key, strlen(key)) != 0) {
        char msg[SIM_ERR_MSG_MAX];
        size_t k = strlen(key), m = strnlen(err->msg, sizeof msg - k - 3);
        memcpy(msg, key, k);
        memcpy(msg + k, ": ", 2);
        memcpy(msg + k + 2, err->msg, m);
        msg[k + 2 + m] = 0;
        memcpy(err->msg, msg, sizeof msg);
    }
    return rc;
}

/* The trace's program with its extras and the picked step's step_note, in one pass over the
 * trace (a Kineto JSON is imported into a temporary native trace first). */
static int read_trace(const char *trace, sim_program *rec, trc_program_info *pi, sim_err *err)
{
    char tmp[SIM_PATH_MAX + 64];
    int rc = trc_import_temp(trace, "replay", tmp, sizeof tmp, err);
    if (rc) return prefixed(rc, "workload.trace", err);
    trc_program_opts o;
    trc_program_opts_init(&o);
    o.extras = 1;
    o.note = annotate;
    rc = trc_trace_file_to_program(tmp[0] ? tmp : trace, &o, rec, pi, err);
    trc_import_temp_drop(tmp);
    return prefixed(rc, "workload.trace", err);
}

/* The figures of the recorded step that the report shows. */
static void copy_recorded(const trc_program_info *pi, trc_replay_info *info)
{
    const step_note *note = pi->note;
    snprintf(info->gpu_name, sizeof info->gpu_name, "%s", pi->gpu_name);
    info->world_size = pi->world_size;
    info->step_index = pi->step_index;
    info->steps = pi->steps;
    info->recorded_step_ns = pi->step_ns_median;
    info->recorded_busy_ns = pi->gpu_busy_ns;
    info->recorded_wait_ns = pi->data_wait_ns;
    info->recorded_collective_ns = pi->collective_gpu_ns;
    info->main_stream = note->main_stream;
    info->side_stream_ns = note->side_stream_ns;
    info->side_hidden_ns = note->side_hidden_ns;
}

/* The catalog GPU the trace was recorded on: workload.trace_gpu, else the recorded name's. */
static int source_gpu(const sim_experiment *x, const trc_program_info *pi, const char *catalog_dir,
                      trc_replay_info *info, sim_gpu_desc *src, sim_err *err)
{
    if (x->workload.trace_gpu[0]) {
        snprintf(info->source_gpu, sizeof info->source_gpu, "%s", x->workload.trace_gpu);
        return prefixed(cfg_catalog_load(catalog_dir, CFG_CAT_GPU, info->source_gpu, src, err),
                        "workload.trace_gpu", err);
    }
    trc_replay_gpu_candidate(pi->gpu_name, info->source_gpu);
    sim_err ignored;
    if (!pi->gpu_name[0] ||
        cfg_catalog_load(catalog_dir, CFG_CAT_GPU, info->source_gpu, src, &ignored))
        return sim_err_set(err, SIM_EINVAL, x->workload.trace, 0, 0,
                           "workload.trace_gpu: the trace's GPU '%s' is not in the catalog "
                           "(tried '%s'); set workload.trace_gpu to the catalog GPU it was "
                           "recorded on (epochsim hw list gpus)",
                           pi->gpu_name[0] ? pi->gpu_name : "(not recorded)", info->source_gpu);
    return SIM_OK;
}

/* The catalog CPU the trace was recorded on: workload.trace_cpu, a documented guess from the GPU
 * name, or (old-schema traces only) system.cpu. */
static int source_cpu(const sim_experiment *x, const trc_program_info *pi, const char *catalog_dir,
                      trc_replay_info *info, sim_cpu_desc *cpu, sim_err *err)
{
    const char *why = "workload.trace_cpu";
    if (x->workload.trace_cpu[0]) {
        snprintf(info->source_cpu, sizeof info->source_cpu, "%s", x->workload.trace_cpu);
    } else {
        const char *g = trc_replay_cpu_guess(pi->gpu_name, &why);
        if (!g && x->system.cpu[0] && !strcmp(pi->source_schema, "kineto-old")) {
            /* PyTorch 1.8/1.9 traces have no field for the CPU at all: the experiment's own
             * CPU is the only one named. A new-schema trace of another box must name its CPU
             * (its distributed and device fields show it ran elsewhere). */
            g = x->system.cpu;
            why = "system.cpu (the trace records no CPU and has no documented guess)";
        }
        if (!g)
            return sim_err_set(err, SIM_EINVAL, x->workload.trace, 0, 0,
                               "workload.trace_cpu: the trace does not record its CPU and there "
                               "is no documented guess for a box with '%s'; set "
                               "workload.trace_cpu to the catalog CPU it was recorded on "
                               "(epochsim hw list cpus)",
                               pi->gpu_name[0] ? pi->gpu_name : "(unknown GPU)");
        snprintf(info->source_cpu, sizeof info->source_cpu, "%s", g);
    }
    info->source_cpu_why = why;
    return prefixed(cfg_catalog_load(catalog_dir, CFG_CAT_CPU, info->source_cpu, cpu, err),
                    "workload.trace_cpu", err);
}

/* What rescaling the recorded ops to the target machine and batch needs. */
typedef struct rescale {
    const sim_experiment *x;
    const sim_hardware *hw;
    const trc_program_info *pi; /* its extra and note: one per recorded op */
    sim_gpu_desc src;
    double cpu_st;      /* source-CPU ns -> reference-core ns */
    double ratio;       /* the experiment's batch over the recorded one */
    sim_precision prec; /* the kernels' */
    int seen_kernel;    /* a kernel came before the op at hand */
} rescale;

/* Recorded op i (of n) rescaled in place; returns 0 when it leaves the program (the batch copy,
 * the loop's tail: both go to info or out). */
static int rescale_op(rescale *rs, size_t i, size_t n, sim_op *op, sim_program *out,
                      trc_replay_info *info)
{
    const trc_op_extra *ex = &rs->pi->extra[i];
    const op_note *nt = &((const step_note *)rs->pi->note)->op[i];
    op->dispatch_ns = (int64_t)llround((double)op->dispatch_ns * rs->cpu_st);
    int side = ex->stream >= 0 && ex->stream != info->main_stream;
    double keep = side && !rs->x->workload.trace_serialize ? nt->exposed : 1.0;
    switch ((sim_op_kind)op->kind) {
    case SIM_OP_MEMCPY_H2D:
        if (!rs->seen_kernel) { /* the batch copy: the trainer issues it (input_bytes x batch) */
            info->input_copy_bytes += (int64_t)op->bytes;
            info->input_copy_dispatch_ns += op->dispatch_ns;
            return 0;
        }
        op->bytes *= rs->ratio;
        break;
    case SIM_OP_KERNEL:
        rs->seen_kernel = 1;
        op->gpu_ns = trc_replay_kernel_ns(op->gpu_ns, (sim_unit)op->unit, nt->conv, ex->flops,
                                          nt->bytes, ex->blocks, &rs->src, &rs->hw->gpu, rs->prec,
                                          nt->fixed ? 1.0 : rs->ratio);
        op->gpu_ns = (int64_t)llround((double)op->gpu_ns * keep);
        break;
    case SIM_OP_ALLREDUCE:
        if (rs->hw->gpu_count > 1) break; /* simulated across the GPUs */
        /* One simulated GPU: the recorded NCCL time stays on the stream as a kernel. */
        if (ex->recorded_gpu_ns > 0) {
            op->kind = SIM_OP_KERNEL;
            op->unit = SIM_UNIT_NONE;
            op->gpu_ns = (int64_t)llround((double)ex->recorded_gpu_ns * keep);
            op->sm_fraction = 1.0f;
        } else {
            op->kind = SIM_OP_CPU;
        }
        op->bytes = 0;
        break;
    case SIM_OP_CPU:
        if (i + 1 == n) { /* the CPU time after the last action: the loop's tail */
            out->step_overhead_ns = op->dispatch_ns;
            return 0;
        }
        break;
    case SIM_OP_SYNC:
    case SIM_OP_MEMCPY_D2H:
    case SIM_OP_NEXT_BATCH: /* traces record one batch per step */
        break;
    }
    return 1;
}

/* The recorded program rec rescaled into out. */
static int rescale_program(rescale *rs, const sim_program *rec, sim_program *out,
                           trc_replay_info *info, sim_err *err)
{
    for (size_t i = 0; i < rec->n_ops; i++) {
        sim_op op = rec->ops[i];
        if (rescale_op(rs, i, rec->n_ops, &op, out, info) && sim_program_push(out, &op))
            return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    out->graph_launch_ns = (int64_t)llround(rs->x->workload.graph_launch_us * 1e3);
    info->kernel_ns = sim_program_gpu_ns(out);
    info->dispatch_ns = sim_program_dispatch_ns(out) + out->step_overhead_ns;
    return SIM_OK;
}

int trc_replay_program(const sim_experiment *x, const sim_hardware *hw, const char *catalog_dir,
                       sim_program *out, trc_replay_info *info_out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    trc_replay_info info_local, *info = info_out ? info_out : &info_local;
    memset(info, 0, sizeof *info);
    sim_program rec = {0};
    trc_program_info pi;
    memset(&pi, 0, sizeof pi);
    rescale rs = {.x = x, .hw = hw, .pi = &pi};
    sim_cpu_desc cpu;
    int rc = read_trace(x->workload.trace, &rec, &pi, err);
    if (rc) goto done;
    copy_recorded(&pi, info);
    if ((rc = source_gpu(x, &pi, catalog_dir, info, &rs.src, err)) ||
        (rc = source_cpu(x, &pi, catalog_dir, info, &cpu, err)))
        goto done;
    rs.cpu_st = cpu.single_thread;
    int src_batch = x->workload.trace_batch > 0 ? x->workload.trace_batch : pi.batch_size;
    info->source_batch = src_batch;
    rs.ratio = src_batch > 0 ? (double)x->loader.batch_size / src_batch : 1.0;
    if (sim_precision_parse(pi.precision, &rs.prec))
        rs.prec = SIM_PREC_FP32; /* "unknown": kernels ran as recorded; fp32 is PyTorch's default */
    rc = rescale_program(&rs, &rec, out, info, err);
done:
    if (rc) sim_program_free(out);
    trc_program_info_free(&pi);
    sim_program_free(&rec);
    return rc;
}

int trc_replay_scenario(const sim_experiment *x, const cfg_experiment_set *set,
                        const char *catalog_dir, sim_scenario *sc, sim_err *err)
{
    trc_replay_info info;
    int rc = trc_replay_program(x, &sc->hw, catalog_dir, &sc->program, &info, err);
    if (rc) return rc;
    if (!cfg_experiment_was_set(set, "training.sync_every_step"))
        sc->training.sync_every_step = false;
    if (!cfg_experiment_was_set(set, "dataset.input_bytes")) {
        int b = info.source_batch > 0 ? info.source_batch : x->loader.batch_size;
        /* no recorded batch copy (input made on the GPU): 1 byte, the key's minimum */
        sc->dataset.input_bytes =
            info.input_copy_bytes > 0 ? (double)info.input_copy_bytes / b : 1.0;
    }
    if (!cfg_experiment_was_set(set, "loader.copy_dispatch_us"))
        sc->copy_dispatch_ns = info.input_copy_dispatch_ns;
    snprintf(sc->workload.trace_gpu, sizeof sc->workload.trace_gpu, "%s", info.source_gpu);
    snprintf(sc->workload.trace_cpu, sizeof sc->workload.trace_cpu, "%s", info.source_cpu);
    sc->workload.trace_batch = info.source_batch;
    return SIM_OK;
}
