/* validate_predict.c — the model's figure for each published row (validate.h).
 * The experiment is built as `run` builds it: the built-in default, then the benchmark data path
 * below, then the row's gpu, gpus, model, precision, batch and its `settings` through
 * cfg_experiment_apply (the `--set` code), then sim_scenario_build. Training rows are simulated
 * with sim_run; microbenchmark rows go to the kernel cost model (models/cost.h) on the catalog
 * GPU; copy rows to the link the scenario resolved; max_batch to the memory model's verdict;
 * all-reduce bus bandwidth to the collective model on the scenario's ring (sim/core/topo.h). */
#include "sim/app/validate.h"

#include "models/cost.h"
#include "models/expand.h"
#include "models/net.h"
#include "sim/core/topo.h"
#include "sim/setup/catalog.h"
#include "sim/setup/config.h"
#include "sim/setup/scenario.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The published training benchmarks feed the GPU with synthetic tensors or DALI: no storage read,
 * no CPU decode, no input copy worth counting. Expressed with existing keys: one-byte samples
 * and inputs, zero decode time. CPU dispatch and the Python step stay in: they are real.
 * STEPS optimizer steps are simulated and the p50 step time is the steady state (the first step
 * waits for the loader's start-up, the median does not). */
static const char *const benchmark_path[] = {
    "dataset.sample_bytes=1", "dataset.decode_us=0", "dataset.decode_cv=0",
    "dataset.input_bytes=1",  "training.epochs=1",
};
#define STEPS 20

static void row_fail(sim_val_row *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void row_fail(sim_val_row *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
    r->predicted = NAN;
}

/* Microbenchmark parameters: the settings without a dot (m=, n=, k=, b= the GEMMs of one batched
 * call, bytes=, pinned=, copies=, vec=, counted=, timed=, startup_s=), and how jobs share a GPU
 * (the experiment's system.gpu_sharing keys).
 * counted= and timed=: the source's rate counts the samples of `counted` optimizer steps over the
 * time of `timed` steps (run_squad.py with --max_steps=100 times 101 steps and counts 100; when
 * its two epochs end first it times fewer than it counts). startup_s=: seconds of the run's
 * one-time start-up inside that time (first iterations: lazy kernel loading, allocator growth,
 * library set-up), read from the run's own log; the model prices steady-state steps. */
typedef struct bench_params {
    double m, n, k, b, bytes, copies, vec, counted, timed, startup_s;
    double cin, hw, cout, filter, stride, pad; /* a convolution (conv_us) */
    double rows, cols;                         /* a row kernel (rowwise_us) */
    const char *pass;                          /* fwd, dgrad or wgrad; borrowed */
    const char *op;                            /* softmax or layernorm; borrowed */
    bool pinned;
    sim_gpushare_config share;
} bench_params;

static int bench_param(sim_val_row *r, const char *item, bench_params *b)
{
    const char *eq = strchr(item, '=');
    char *end;
    double v = eq ? strtod(eq + 1, &end) : 0;
    static const char *const passes[] = {"fwd", "dgrad", "wgrad", NULL};
    static const char *const row_ops[] = {"softmax", "layernorm", NULL};
    int pass = eq && !strncmp(item, "pass=", 5) ? mdl_name_index(passes, eq + 1) : -1;
    int op = eq && !strncmp(item, "op=", 3) ? mdl_name_index(row_ops, eq + 1) : -1;
    if (pass >= 0) {
        b->pass = passes[pass];
        return 0;
    }
    if (op >= 0) {
        b->op = row_ops[op];
        return 0;
    }
    if (eq && !strncmp(item, "pinned=", 7)) {
        b->pinned = !strcmp(eq + 1, "true");
        if (b->pinned || !strcmp(eq + 1, "false")) return 0;
    } else if (eq && !strncmp(item, "pad=", 4) && end != eq + 1 && !*end && v >= 0) {
        b->pad = v;
        return 0;
    } else if (eq && end != eq + 1 && !*end && v > 0) {
        size_t len = (size_t)(eq - item);
        static const char *const names[] = {
            "m",   "n",  "k",    "b",      "bytes",  "copies", "vec",  "counted",  "timed",
            "cin", "hw", "cout", "filter", "stride", "rows",   "cols", "startup_s"};
        double *slots[] = {&b->m,      &b->n,       &b->k,     &b->b,    &b->bytes,    &b->copies,
                           &b->vec,    &b->counted, &b->timed, &b->cin,  &b->hw,       &b->cout,
                           &b->filter, &b->stride,  &b->rows,  &b->cols, &b->startup_s};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i]) == len && !strncmp(item, names[i], len)) {
                *slots[i] = v;
                return 0;
            }
    }
    row_fail(r,
             "settings: '%s' is neither an experiment key nor m=, n=, k=, b=, bytes=, pinned=, "
             "copies=, vec=, counted=, timed=, startup_s=, cin=, hw=, cout=, filter=, stride=, "
             "pad=, pass=fwd|dgrad|wgrad, op=softmax|layernorm, rows=, cols=",
             item);
    return -1;
}

static int apply(sim_val_row *r, const char *assignment, sim_experiment *x, cfg_experiment_set *set)
{
    sim_err err;
    sim_err_clear(&err);
    if (!cfg_experiment_apply(assignment, x, set, &err)) return 0;
    row_fail(r, "settings '%s': %s", assignment, err.msg);
    return -1;
}

/* A path key's relative value is relative to the row's table file, as an experiment file's
 * are to its folder: `key=P` becomes `key=DIR/P` in buf. Other assignments come back as they are.
 */
static const char *beside_table(const sim_val_row *r, const char *item, const char *key, char *buf,
                                size_t size)
{
    const char *value = item + strlen(key);
    if (*value == '=') value++;
    const char *slash = strrchr(r->file, '/');
    if (!cfg_experiment_path_key(key) || !value[0] || value[0] == '/' || !slash) return item;
    snprintf(buf, size, "%s=%.*s%s", key, (int)(slash - r->file + 1), r->file, value);
    return buf;
}

/* The row's settings, `;`-separated: experiment keys (dotted) through apply, the rest into b. */
static int apply_settings(sim_val_row *r, sim_experiment *x, cfg_experiment_set *set,
                          bench_params *b)
{
    char item[512], key[256], path[SIM_PATH_MAX + 256];
    for (const char *s = r->settings; *s; s += strcspn(s, ";") + (s[strcspn(s, ";")] == ';')) {
        size_t len = strcspn(s, ";");
        snprintf(item, sizeof item, "%.*s", (int)len, s);
        size_t key_len = strcspn(item, "=");
        snprintf(key, sizeof key, "%.*s", (int)key_len, item);
        if (!len) continue;
        if (!strchr(key, '.')) {
            if (bench_param(r, item, b)) return -1;
        } else if (cfg_table_find(cfg_experiment_table(), key, NULL)) {
            if (apply(r, beside_table(r, item, key, path, sizeof path), x, set)) return -1;
        } else {
            row_fail(r, "settings: unknown experiment key '%s'", key);
            return -1;
        }
    }
    return 0;
}

/* The experiment of a row, as `run --set ...` would build it. */
static int experiment(sim_val_row *r, sim_experiment *x, cfg_experiment_set *set, bench_params *b)
{
    memset(set, 0, sizeof *set);
    sim_experiment_defaults(x);
    char a[600];
    for (size_t i = 0; i < sizeof benchmark_path / sizeof benchmark_path[0]; i++)
        if (apply(r, benchmark_path[i], x, set)) return -1;
    snprintf(a, sizeof a, "training.max_steps=%d", STEPS);
    if (apply(r, a, x, set)) return -1;
    snprintf(a, sizeof a, "system.gpu=%s", r->gpu);
    if (apply(r, a, x, set)) return -1;
    snprintf(a, sizeof a, "system.gpu_count=%d", r->gpus);
    if (apply(r, a, x, set)) return -1;
    snprintf(a, sizeof a, "workload.precision=%s", r->precision);
    if (apply(r, a, x, set)) return -1;
    if (strcmp(r->model, "-")) {
        snprintf(a, sizeof a, "workload.model=%s", r->model);
        if (apply(r, a, x, set)) return -1;
    }
    if (r->batch > 0) {
        snprintf(a, sizeof a, "loader.batch_size=%d", r->batch);
        if (apply(r, a, x, set)) return -1;
    }
    if (r->metric == SIM_VAL_INFERENCE_MS && apply(r, "workload.mode=inference", x, set)) return -1;
    if (apply_settings(r, x, set, b)) return -1;
    b->share = (sim_gpushare_config){(sim_gpu_sharing)x->system.gpu_sharing,
                                     (int64_t)(x->system.gpu_timeslice_us * 1e3),
                                     (int64_t)(x->system.gpu_switch_us * 1e3)};
    return 0;
}

/* What a scenario build (or re-pricing) returned, as the row's state; a batch the memory model
 * rejects is the answer of a max_batch row. */
static int built(sim_val_row *r, int rc, const sim_scenario *sc, const sim_err *err)
{
    snprintf(r->arch, sizeof r->arch, "%s", sc->hw.gpu.arch);
    if (rc == SIM_EOOM && r->metric == SIM_VAL_MAX_BATCH) return 0;
    if (rc) row_fail(r, "%s", err->msg);
    return rc ? -1 : 0;
}

/* The row's experiment into a scenario, on the catalog GPU or on *gpu. */
static int build(sim_val_row *r, const char *catalog, const sim_gpu_desc *gpu, sim_scenario *sc,
                 bench_params *b)
{
    sim_experiment x;
    cfg_experiment_set set;
    if (experiment(r, &x, &set, b)) return -1;
    sim_err err;
    sim_err_clear(&err);
    return built(r, sim_scenario_build_gpu(&x, &set, catalog, gpu, sc, &err), sc, &err);
}

/* The samples the source counts per step it timed: counted / timed (1 without them), or -1
 * with the row failed when they are not both whole numbers of at least 1. */
static double counted_share(sim_val_row *r, const bench_params *b)
{
    if (b->counted == 0 && b->timed == 0) return 1;
    if (b->counted < 1 || b->timed < 1 || b->counted != floor(b->counted) ||
        b->timed != floor(b->timed)) {
        row_fail(r, "counted= and timed= must both be whole numbers of at least 1");
        return -1;
    }
    return b->counted / b->timed;
}

/* Training figures from a simulated run: samples per second from the p50 optimizer step, counted
 * as the source counts them (counted_share), its timed steps carrying the start-up
 * (startup_s over timed, each). */
static void predict_run(sim_val_row *r, const sim_scenario *sc, const bench_params *b)
{
    double share = counted_share(r, b);
    if (share < 0) return;
    if (b->startup_s > 0 && !(b->timed >= 1 && r->metric == SIM_VAL_SAMPLES_PER_S)) {
        row_fail(r, "startup_s= needs counted= and timed= on a samples_per_s row");
        return;
    }
    sim_result res;
    sim_err err;
    sim_err_clear(&err);
    if (sim_run(sc, &res, &err)) {
        row_fail(r, "run: %s", err.msg);
        return;
    }
    double step_ms = res.mean.step_time_ms_p50;
    if (b->startup_s > 0) step_ms += b->startup_s * 1e3 / b->timed;
    double samples = (double)sc->loader.batch_size * sim_program_batches_per_step(&sc->program);
    if (r->metric == SIM_VAL_SAMPLES_PER_S)
        r->predicted = step_ms > 0 ? share * samples / (step_ms / 1e3) : NAN;
    else if (r->metric == SIM_VAL_STEP_MS || r->metric == SIM_VAL_INFERENCE_MS)
        r->predicted = step_ms / share;
    else
        r->predicted = res.mean.gpu_util_pct;
    sim_result_free(&res);
}

/* copies= identical jobs on the scenario's one GPU: job 0's p50 step against the job alone. */
static void predict_colocated(sim_val_row *r, const sim_scenario *sc, const bench_params *b)
{
    int n = b->copies > 0 ? (int)b->copies : 2;
    if (n < 2 || n > 16 || sc->hw.gpu_count != 1) {
        row_fail(r, "colocated_pct needs gpus 1 and copies= from 2 to 16");
        return;
    }
    static const int gpu0[] = {0};
    sim_job_slot slot[16];
    for (int j = 0; j < n; j++)
        slot[j] = (sim_job_slot){.sc = sc, .gpus = gpu0};
    sim_result solo;
    sim_jobs_result shared;
    sim_err err;
    sim_err_clear(&err);
    if (sim_run(sc, &solo, &err)) {
        row_fail(r, "run: %s", err.msg);
        return;
    }
    if (sim_run_jobs(sc, slot, n, &b->share, &shared, &err)) {
        row_fail(r, "run: %s", err.msg);
    } else {
        double ms = shared.job[0].mean.step_time_ms_p50;
        r->predicted = ms > 0 ? 100 * solo.mean.step_time_ms_p50 / ms : NAN;
        sim_jobs_result_free(&shared);
    }
    sim_result_free(&solo);
}

/* One kernel of the microbenchmark through the cost model on the scenario's GPU; a share row
 * prices the GEMM on the MIG instance and on the whole GPU it was cut from. */
static void predict_kernel(sim_val_row *r, const sim_scenario *sc, const bench_params *b,
                           const sim_gpu_desc *whole)
{
    sim_precision p = sc->workload.precision;
    double elt = mdl_dtype_bytes(MDL_DT_ACT, p);
    mdl_kernel k = {.op = "validate", .layer = -1, .kind = SIM_OP_KERNEL, .blocks = 1};
    bool share = r->metric == SIM_VAL_GEMM_SHARE_PCT;
    if (share && !(whole && sc->hw.mig[0])) {
        row_fail(r, "gemm_share_pct needs settings placement.mig=PROFILE");
        return;
    }
    if (r->metric == SIM_VAL_GEMM_TFLOPS || share) {
        if (!(b->m > 0 && b->n > 0 && b->k > 0)) {
            row_fail(r, "settings: %s needs m=, n= and k=", sim_val_metric_name(r->metric));
            return;
        }
        if (b->b > 0 && (b->b != floor(b->b) || b->b > 65536)) {
            row_fail(r, "settings: b= is the number of GEMMs of the shape in one batched call, "
                        "a whole number up to 65536");
            return;
        }
        double batch = b->b > 0 ? b->b : 1;
        k.math = MDL_MATH_GEMM;
        k.flops = 2 * b->m * b->n * b->k * batch;
        k.bytes = (b->m * b->k + b->k * b->n + b->m * b->n) * elt * batch;
        k.gemm_m = b->m, k.gemm_n = b->n, k.gemm_k = b->k, k.gemm_batch = batch;
    } else if (r->metric == SIM_VAL_MEM_BW_GBPS) {
        if (!(b->bytes > 0)) {
            row_fail(r, "settings: mem_bw_gbps needs bytes=");
            return;
        }
        k.math = MDL_MATH_SIMT;
        k.bytes = 2 * b->bytes; /* a copy reads and writes the buffer */
        k.blocks = ceil(b->bytes / elt / 512);
        if (b->vec > 0 && (b->vec != floor(b->vec) || b->vec > 16)) {
            row_fail(r, "settings: vec= is the elements in flight per thread, 1 to 16");
            return;
        }
        if (b->vec > 0) { /* PyTorch's elementwise loop: vec= elements per thread in flight */
            k.vec_elems = b->bytes / elt;
            k.vec_width = (uint8_t)b->vec;
        }
    } else {
        k.math = MDL_MATH_SIMT; /* an empty kernel: only the fixed cost */
    }
    double ns = (double)mdl_kernel_time_ns(&k, &sc->hw.gpu, p);
    if (share) {
        r->predicted = 100.0 * (double)mdl_kernel_time_ns(&k, whole, p) / ns;
        return;
    }
    r->predicted = r->metric == SIM_VAL_GEMM_TFLOPS   ? k.flops / ns / 1e3
                   : r->metric == SIM_VAL_MEM_BW_GBPS ? k.bytes / ns
                                                      : ns / 1e3;
}

/* The kernel of pass `op` ("conv_fwd", "conv_dgrad", "conv_wgrad") of layer `layer`, or NULL. */
static const mdl_kernel *conv_kernel(const mdl_step *st, const char *op, int layer)
{
    for (size_t i = 0; i < st->n; i++)
        if (st->k[i].layer == layer && !strcmp(st->k[i].op, op)) return &st->k[i];
    return NULL;
}

/* One convolution call as a training step expands it (models/expand.c) and the cost model prices
 * it on the scenario's GPU: a net of a ReLU (so that the convolution's input has a gradient), the
 * convolution, pooling, a linear and the loss, at the row's batch and precision. */
static void predict_conv(sim_val_row *r, const sim_scenario *sc, const bench_params *b)
{
    if (!(b->cin > 0 && b->hw > 0 && b->cout > 0 && b->filter > 0 && b->pass) ||
        b->cin != floor(b->cin) || b->hw != floor(b->hw) || b->cout != floor(b->cout) ||
        b->filter != floor(b->filter) || b->stride != floor(b->stride) || b->pad != floor(b->pad) ||
        b->cin > 65536 || b->cout > 65536 || b->hw > 65536 || b->filter > 64 || b->pad > 64 ||
        b->stride > 64) {
        row_fail(r, "settings: conv_us needs whole numbers cin=, hw=, cout=, filter= (up to 64), "
                    "stride= and pad= (default 1 and 0) and pass=fwd|dgrad|wgrad");
        return;
    }
    mdl_net net;
    mdl_val x;
    mdl_net_init(&net, "conv", (int)b->cin, (int)b->hw, (int)b->hw, MDL_DT_ACT, &x);
    x = mdl_act_layer(&net, "relu", x, MDL_ACT_RELU, false);
    int layer = net.n_layers;
    x = mdl_conv(&net, "conv", x, (int)b->cout, (int)b->filter, b->stride > 0 ? (int)b->stride : 1,
                 (int)b->pad, 1, false);
    x = mdl_avgpool(&net, "pool", x);
    x = mdl_linear(&net, "fc", x, 10, true);
    mdl_loss_ce(&net, "loss", x, 10);
    mdl_options o;
    mdl_options_defaults(&o);
    o.batch = r->batch;
    o.precision = sc->workload.precision;
    o.optimizer = MDL_OPT_NONE;
    o.conv_tensor_cores = mdl_conv_tensor_cores(&sc->hw.gpu, o.precision);
    mdl_step st = {0};
    sim_err err;
    sim_err_clear(&err);
    if (net.error) {
        row_fail(r, "settings: %s", net.error_msg);
    } else if (mdl_options_check(&o, &err) || mdl_expand(&net, &o, NULL, &st, &err)) {
        row_fail(r, "%s", err.msg);
    } else {
        char op[16];
        snprintf(op, sizeof op, "conv_%s", b->pass);
        const mdl_kernel *k = conv_kernel(&st, op, layer);
        if (k)
            r->predicted = (double)mdl_kernel_time_ns(k, &sc->hw.gpu, o.precision) / 1e3;
        else
            row_fail(r, "no %s kernel in the expanded step", op);
    }
    mdl_step_free(&st);
    mdl_net_free(&net);
}

/* One forward row kernel as expand.c emits it (mdl_softmax_fwd_kernel, mdl_layernorm_fwd_kernel),
 * in the row's precision (fp32 or half; a LayerNorm's input and output of that type). */
static void predict_rowwise(sim_val_row *r, const sim_scenario *sc, const bench_params *b)
{
    if (!(b->op && b->rows > 0 && b->cols > 0) || b->rows != floor(b->rows) ||
        b->cols != floor(b->cols) || b->rows * b->cols > 1e12) {
        row_fail(r, "settings: rowwise_us needs op=softmax|layernorm and whole numbers rows= and "
                    "cols= (up to 1e12 elements)");
        return;
    }
    sim_precision p = sc->workload.precision;
    double elt = mdl_dtype_bytes(MDL_DT_ACT, p);
    mdl_kernel k = !strcmp(b->op, "softmax") ? mdl_softmax_fwd_kernel(b->rows, b->cols, elt)
                                             : mdl_layernorm_fwd_kernel(b->rows, b->cols, elt, elt);
    k.op = b->op;
    k.layer = -1;
    r->predicted = (double)mdl_kernel_time_ns(&k, &sc->hw.gpu, p) / 1e3;
}

/* A host-to-device copy as the GPU stream charges it (sim/gpu.c, sim/run.c): bytes at the
 * link's pinned rate, x pinned/pageable for pageable memory, then the fixed per-copy cost. */
static void predict_copy(sim_val_row *r, const sim_scenario *sc, const bench_params *b)
{
    const sim_link_desc *l = &sc->hw.link;
    if (!(b->bytes > 0)) {
        row_fail(r, "settings: h2d_gbps needs bytes=");
        return;
    }
    double work = b->bytes * (b->pinned ? 1.0 : l->pinned_gbps / l->pageable_gbps);
    double s = work / (l->pinned_gbps * 1e9) + l->copy_overhead_us * 1e-6;
    r->predicted = b->bytes / s / 1e9;
}

/* all_reduce_perf's busbw for bytes= on the scenario's GPUs, as a run's DDP all-reduce sees
 * their ring. */
static void predict_busbw(sim_val_row *r, const sim_scenario *sc, const bench_params *b)
{
    if (!(b->bytes > 0) || sc->hw.gpu_count < 2) {
        row_fail(r, "settings: busbw_gbps needs bytes= and gpus of 2 or more");
        return;
    }
    sim_ring ring = sim_topo_ring(&sc->hw, NULL, sc->hw.gpu_count);
    sim_allreduce ar;
    sim_topo_allreduce(&ring, b->bytes, &ar);
    r->predicted = ar.busbw_gbps;
}

/* The row's figure from its built scenario, by metric. */
static void predict_built(sim_val_row *r, const sim_scenario *sc, const bench_params *b,
                          const sim_gpu_desc *whole)
{
    r->error[0] = 0;
    switch (r->metric) {
    case SIM_VAL_SAMPLES_PER_S:
    case SIM_VAL_STEP_MS:
    case SIM_VAL_GPU_UTIL_PCT:
    case SIM_VAL_INFERENCE_MS:
        predict_run(r, sc, b);
        break;
    case SIM_VAL_H2D_GBPS:
        predict_copy(r, sc, b);
        break;
    case SIM_VAL_BUSBW_GBPS:
        predict_busbw(r, sc, b);
        break;
    case SIM_VAL_COLOCATED_PCT:
        predict_colocated(r, sc, b);
        break;
    case SIM_VAL_CONV_US:
        predict_conv(r, sc, b);
        break;
    case SIM_VAL_ROWWISE_US:
        predict_rowwise(r, sc, b);
        break;
    case SIM_VAL_MAX_BATCH:
        if (sc->memory.known)
            r->predicted = sc->memory.max_batch;
        else
            row_fail(r, "max_batch needs a zoo model");
        break;
    default:
        predict_kernel(r, sc, b, whole);
    }
}

void sim_val_predict_row(sim_val_row *r, const char *catalog_dir, const sim_gpu_desc *gpu)
{
    sim_scenario sc;
    memset(&sc, 0, sizeof sc);
    bench_params b = {.pinned = true};
    r->error[0] = 0;
    /* the whole GPU a MIG instance is cut from: the one given, else the catalog's */
    sim_gpu_desc whole;
    if (!gpu && r->metric == SIM_VAL_GEMM_SHARE_PCT &&
        cfg_catalog_load(catalog_dir, CFG_CAT_GPU, r->gpu, &whole, NULL) == 0)
        gpu = &whole;
    if (build(r, catalog_dir, gpu == &whole ? NULL : gpu, &sc, &b) == 0)
        predict_built(r, &sc, &b, gpu);
    sim_scenario_free(&sc);
}

void sim_val_predict(sim_val_table *t, const char *catalog_dir)
{
    for (size_t i = 0; i < t->n; i++)
        sim_val_predict_row(&t->rows[i], catalog_dir, NULL);
}

/* ---- one row priced again and again (calibration) ---------------------------------------- */

struct sim_val_prepared {
    sim_val_row *row;    /* borrowed */
    const char *catalog; /* borrowed */
    sim_experiment x;
    cfg_experiment_set set;
    bench_params b;
    sim_scenario sc; /* built once; its program is re-priced by sim_val_reprice */
};

sim_val_prepared *sim_val_prepare(sim_val_row *r, const char *catalog_dir)
{
    sim_val_prepared *p = calloc(1, sizeof *p);
    if (!p) {
        row_fail(r, "out of memory");
        return NULL;
    }
    p->row = r;
    p->catalog = catalog_dir;
    p->b.pinned = true;
    r->error[0] = 0;
    sim_err err;
    sim_err_clear(&err);
    if (experiment(r, &p->x, &p->set, &p->b) ||
        built(r, sim_scenario_build(&p->x, &p->set, catalog_dir, &p->sc, &err), &p->sc, &err)) {
        sim_val_prepared_free(p);
        return NULL;
    }
    return p;
}

double sim_val_reprice(sim_val_prepared *p, const sim_gpu_desc *gpu)
{
    sim_err err;
    sim_err_clear(&err);
    int rc = sim_scenario_reprice(&p->x, &p->set, p->catalog, gpu, &p->sc, &err);
    if (built(p->row, rc, &p->sc, &err) == 0) predict_built(p->row, &p->sc, &p->b, gpu);
    return p->row->predicted;
}

void sim_val_prepared_free(sim_val_prepared *p)
{
    if (!p) return;
    sim_scenario_free(&p->sc);
    free(p);
}

double sim_val_error_pct(const sim_val_row *r)
{
    return (r->predicted / r->value - 1) * 100;
}
