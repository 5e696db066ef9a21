/* calibrate_runs.c — fitting a GPU's catalog fields to measured training runs (see
 * calibrate_runs.h). The one idea: a row's scenario is built once (sim_val_prepare) and each
 * trial point only re-prices and simulates it (sim_val_reprice), so an evaluation costs one
 * simulation per row, spread over threads. */
#include "sim/app/calibrate_runs.h"

#include "models/cost.h"
#include "sim/base/json.h"
#include "sim/setup/catalog.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#define MAX_THREADS 16

/* The fit's coordinates. mdl_fit differentiates by forward differences with GSL's default step,
 * sqrt(DBL_EPSILON) x |ln theta|, about 1e-7 of a field: far below what moves a simulated run,
 * whose kernels last whole nanoseconds. So the fit sees t with ln t = FIT_U0 + FIT_K s instead
 * of the field: its step, 1.5e-8 x FIT_U0 in ln t, moves s by 1.5e-6 / FIT_K = 0.1 %, several
 * ns on a microsecond kernel, and its convergence test (steps below 1e-8 x FIT_U0 in ln t) stops
 * when a step moves every field by less than 0.07 %. The field is start x exp(FIT_B tanh(s /
 * FIT_B)): ln(field / start) = s near the start, and never beyond +-FIT_B (x/ 100), so a long
 * trial step cannot ask for a run of kernels lasting years. */
#define FIT_U0 100.0
#define FIT_K 1.5e-3
#define FIT_B 4.605170185988091 /* ln 100 */

static double *field(sim_gpu_desc *g, const cfg_field *f)
{
    return (double *)((char *)g + f->offset);
}

/* ln(field / start) at the fit's coordinate t, and its derivative by s (see FIT_B). */
static double log_scale(double t, double *slope)
{
    double x = tanh((log(t) - FIT_U0) / FIT_K / FIT_B);
    if (slope) *slope = 1 - x * x;
    return FIT_B * x;
}

/* The entry with the fit's coordinates t (NULL: the start) in the fitted fields. */
static sim_gpu_desc trial(const sim_cal_runs *c, const double *t)
{
    sim_gpu_desc g = c->pr.gpu;
    for (size_t i = 0; t && i < c->pr.p; i++)
        *field(&g, c->pr.param[i]) = cal_param_start(&c->pr, i) * exp(log_scale(t[i], NULL));
    return g;
}

/* ---- pricing every fit row on one GPU ---------------------------------------------------- */

typedef struct pricing {
    sim_cal_runs *c;
    const sim_gpu_desc *gpu;
    double *pred;
    atomic_size_t next;
} pricing;

static void *price_rows(void *arg)
{
    pricing *w = arg;
    size_t i;
    while ((i = atomic_fetch_add(&w->next, 1)) < w->c->fit.n)
        w->pred[i] = sim_val_reprice(w->c->prep[i], w->gpu);
    return NULL;
}

static void evaluate(sim_cal_runs *c, const sim_gpu_desc *gpu, double *pred)
{
    pricing w = {.c = c, .gpu = gpu, .pred = pred};
    atomic_init(&w.next, 0);
    pthread_t t[MAX_THREADS];
    int n = 0;
    while (n + 1 < c->threads && (size_t)n + 1 < c->fit.n &&
           !pthread_create(&t[n], NULL, price_rows, &w))
        n++;
    price_rows(&w);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    c->evaluations += (long)c->fit.n;
}

/* The first row of t whose prediction is NaN, as an error naming it; SIM_OK when none. */
static int unpredicted(const sim_val_table *t, const double *pred, sim_err *err)
{
    for (size_t i = 0; i < t->n; i++) {
        const sim_val_row *r = &t->rows[i];
        if (isnan(pred[i]))
            return sim_err_set(err, SIM_EINVAL, r->file, r->line, 0,
                               "run '%s' cannot be predicted: %s", r->id,
                               r->error[0] ? r->error : "no figure");
    }
    return SIM_OK;
}

/* ---- reading and checking the rows ------------------------------------------------------- */

static int read_files(sim_val_table *t, const char *const *paths, int n, sim_err *err)
{
    for (int i = 0; i < n; i++) {
        int rc = sim_val_read_file(t, paths[i], err);
        if (rc) return rc;
    }
    return SIM_OK;
}

/* Every row a run on the GPU `gpu` (the first row's when gpu is ""): a training run or an
 * inference pass. */
static int check_rows(const sim_val_table *t, char *gpu, const char **first, int *first_line,
                      sim_err *err)
{
    for (size_t i = 0; i < t->n; i++) {
        const sim_val_row *r = &t->rows[i];
        if (r->metric != SIM_VAL_SAMPLES_PER_S && r->metric != SIM_VAL_STEP_MS &&
            r->metric != SIM_VAL_INFERENCE_MS)
            return sim_err_set(err, SIM_EINVAL, r->file, r->line, 0,
                               "run '%s' measures %s; --runs takes samples_per_s, step_ms or "
                               "inference_ms",
                               r->id, sim_val_metric_name(r->metric));
        if (!gpu[0]) {
            snprintf(gpu, SIM_NAME_MAX, "%s", r->gpu);
            *first = r->file, *first_line = r->line;
        } else if (strcmp(gpu, r->gpu) && !*first)
            return sim_err_set(err, SIM_EINVAL, r->file, r->line, 0,
                               "run '%s' is on %s but --gpu is %s: calibrate one GPU at a time",
                               r->id, r->gpu, gpu);
        else if (strcmp(gpu, r->gpu))
            return sim_err_set(err, SIM_EINVAL, r->file, r->line, 0,
                               "run '%s' is on %s but %s:%d is on %s: calibrate one GPU at a "
                               "time",
                               r->id, r->gpu, *first, *first_line, gpu);
    }
    return SIM_OK;
}

/* Reads both tables, loads the GPU entry, prepares and predicts every fit row on it. */
static int load_rows(sim_cal_runs *c, const sim_cal_runs_args *a, sim_err *err)
{
    char gpu[SIM_NAME_MAX] = "";
    const char *first = NULL;
    int first_line = 0, rc;
    if (a->gpu) snprintf(gpu, sizeof gpu, "%s", a->gpu);
    if ((rc = read_files(&c->fit, a->runs, a->n_runs, err)) ||
        (rc = read_files(&c->check, a->checks, a->n_checks, err)) ||
        (rc = check_rows(&c->fit, gpu, &first, &first_line, err)) ||
        (rc = check_rows(&c->check, gpu, &first, &first_line, err)))
        return rc;
    if (c->fit.n == 0)
        return sim_err_set(err, SIM_EINVAL, a->runs[0], 0, 0, "no measured run in the file(s)");
    if ((rc = cfg_catalog_load(c->catalog, CFG_CAT_GPU, gpu, &c->pr.gpu, err))) return rc;
    size_t n = c->fit.n, m = c->check.n;
    c->prep = calloc(n, sizeof *c->prep);
    c->before = calloc(n, sizeof(double));
    c->after = calloc(n, sizeof(double));
    c->check_before = calloc(m ? m : 1, sizeof(double));
    c->check_after = calloc(m ? m : 1, sizeof(double));
    if (!c->prep || !c->before || !c->after || !c->check_before || !c->check_after)
        return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    for (size_t i = 0; i < n; i++) {
        sim_val_row *r = &c->fit.rows[i];
        if (!(c->prep[i] = sim_val_prepare(r, c->catalog)))
            return sim_err_set(err, SIM_EINVAL, r->file, r->line, 0,
                               "run '%s' cannot be predicted: %s", r->id, r->error);
    }
    evaluate(c, &c->pr.gpu, c->before);
    for (size_t i = 0; i < m; i++) {
        sim_val_predict_row(&c->check.rows[i], c->catalog, &c->pr.gpu);
        c->check_before[i] = c->check.rows[i].predicted;
    }
    if ((rc = unpredicted(&c->fit, c->before, err))) return rc;
    return unpredicted(&c->check, c->check_before, err);
}

/* ---- the fitted fields ------------------------------------------------------------------- */

/* 1 if some fit row's prediction moves when field f moves by 10 %. */
static int matters(sim_cal_runs *c, const cfg_field *f)
{
    sim_gpu_desc g = c->pr.gpu;
    *field(&g, f) *= 1.1;
    int moved = 0;
    for (size_t i = 0; !moved && i < c->fit.n; i++)
        moved = sim_val_reprice(c->prep[i], &g) != c->before[i];
    return moved;
}

static int add_param(sim_cal_runs *c, const char *name, sim_err *err)
{
    int rc = cal_add_param(&c->pr, name, err);
    if (rc) return rc;
    if (matters(c, c->pr.param[c->pr.p - 1])) return SIM_OK;
    c->pr.p--;
    return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                       "--param %s: no measured run's prediction depends on it, so the runs "
                       "cannot fit it",
                       name);
}

/* A peak rate is a default when the rows' precisions price tensor-class kernels with it. */
static int rate_used(const sim_cal_runs *c, const char *name)
{
    const cfg_field *f = cfg_table_find(cfg_catalog_table(CFG_CAT_GPU), name, NULL);
    sim_gpu_desc g = c->pr.gpu;
    *field(&g, f) *= 1.1;
    static const mdl_math maths[] = {MDL_MATH_GEMM, MDL_MATH_CONV, MDL_MATH_ATTN};
    for (size_t i = 0; i < c->fit.n; i++) {
        sim_precision p;
        if (sim_precision_parse(c->fit.rows[i].precision, &p)) continue;
        for (size_t k = 0; k < sizeof maths / sizeof *maths; k++)
            if (mdl_peak_flops(&g, p, maths[k], NULL) !=
                mdl_peak_flops(&c->pr.gpu, p, maths[k], NULL))
                return 1;
    }
    return 0;
}

static int choose_params(sim_cal_runs *c, const sim_cal_runs_args *a, FILE *notes, sim_err *err)
{
    static const char *const defaults[] = {"kernel_overhead_us", "fp32_tflops", "tf32_tflops",
                                           "fp16_tflops",        "bf16_tflops", "mem_bw_gbps"};
    for (int i = 0; i < a->n_params; i++) {
        int rc = add_param(c, a->params[i], err);
        if (rc) return rc;
    }
    for (size_t i = 0; a->n_params == 0 && i < sizeof defaults / sizeof *defaults; i++) {
        sim_err skip;
        if (strstr(defaults[i], "_tflops") && !rate_used(c, defaults[i])) continue;
        if (add_param(c, defaults[i], &skip) && notes)
            fprintf(notes, "epochsim calibrate: not fitted: %s\n", skip.msg);
    }
    if (c->pr.p == 0) return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "nothing to fit");
    if (c->fit.n < c->pr.p) {
        const sim_val_row *last = &c->fit.rows[c->fit.n - 1];
        return sim_err_set(err, SIM_EINVAL, last->file, last->line, 0,
                           "%zu measured run(s) for %zu fitted fields: a fit needs at least as "
                           "many runs as fields (give more rows or fewer --param)",
                           c->fit.n, c->pr.p);
    }
    return SIM_OK;
}

int sim_cal_runs_load(sim_cal_runs *c, const sim_cal_runs_args *a, FILE *notes, sim_err *err)
{
    memset(c, 0, sizeof *c);
    c->catalog = a->catalog;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    c->threads = a->threads > 0 ? a->threads : cpus > 0 ? (int)cpus : 1;
    if (c->threads > MAX_THREADS) c->threads = MAX_THREADS;
    int rc = load_rows(c, a, err);
    return rc ? rc : choose_params(c, a, notes, err);
}

/* ---- the fit ----------------------------------------------------------------------------- */

/* r_i = ln(predicted_i / measured_i) with the fitted fields at t. */
static int residuals(const double *t, double *r, void *ctx)
{
    sim_cal_runs *c = ctx;
    sim_gpu_desc g = trial(c, t);
    evaluate(c, &g, r);
    for (size_t i = 0; i < c->fit.n; i++) {
        const sim_val_row *row = &c->fit.rows[i];
        if (isnan(r[i])) {
            c->failed = row;
            return SIM_EINVAL;
        }
        r[i] = log(r[i] / row->value);
    }
    return SIM_OK;
}

int sim_cal_runs_fit(sim_cal_runs *c, mdl_fit_result *out, sim_err *err)
{
    double t0[MDL_FIT_MAX_PARAMS];
    for (size_t i = 0; i < c->pr.p; i++)
        t0[i] = exp(FIT_U0);
    int rc = mdl_fit(c->pr.p, t0, c->fit.n, residuals, c, out, err);
    if (rc && c->failed)
        return sim_err_set(err, rc, c->failed->file, c->failed->line, 0,
                           "run '%s' cannot be predicted at a trial point of the fit: %s",
                           c->failed->id, c->failed->error);
    if (rc) return rc;
    sim_gpu_desc g = trial(c, out->theta);
    for (size_t i = 0; i < c->pr.p; i++) {
        /* sigma(ln t) = sigma_t / t; ln field moves by slope x d(ln t) / FIT_K */
        double fitted = *field(&g, c->pr.param[i]), slope;
        log_scale(out->theta[i], &slope);
        /* At the bound, or where no run moves with the field any more (a zero column of the
         * Jacobian gives a zero variance while the residuals are not), the runs do not pin
         * it down: no standard error. */
        out->sigma[i] = slope < 0.01 || (!(out->sigma[i] > 0) && out->rms_end > 0)
                            ? NAN
                            : fitted * slope * (out->sigma[i] / out->theta[i]) / FIT_K;
        out->theta[i] = fitted;
    }
    evaluate(c, &g, c->after);
    for (size_t i = 0; i < c->check.n; i++) {
        sim_val_predict_row(&c->check.rows[i], c->catalog, &g);
        c->check_after[i] = c->check.rows[i].predicted;
    }
    if ((rc = unpredicted(&c->fit, c->after, err))) return rc;
    return unpredicted(&c->check, c->check_after, err);
}

double sim_cal_runs_mape(const sim_val_table *t, const double *pred)
{
    double sum = 0;
    int n = 0;
    for (size_t i = 0; i < t->n; i++)
        if (!isnan(pred[i])) sum += fabs(pred[i] / t->rows[i].value - 1), n++;
    return n ? 100 * sum / n : NAN;
}

void sim_cal_runs_free(sim_cal_runs *c)
{
    for (size_t i = 0; c->prep && i < c->fit.n; i++)
        sim_val_prepared_free(c->prep[i]);
    free(c->prep);
    free(c->before);
    free(c->after);
    free(c->check_before);
    free(c->check_after);
    sim_val_table_free(&c->fit);
    sim_val_table_free(&c->check);
    memset(c, 0, sizeof *c);
}

/* ---- the report -------------------------------------------------------------------------- */

static double error_pct(const sim_val_row *r, double pred)
{
    return (pred / r->value - 1) * 100;
}

static void print_text(FILE *out, const sim_cal_runs *c, const mdl_fit_result *fit,
                       const char *overlay)
{
    fprintf(out, "calibrate %s on %zu measured run(s), %zu held out\n\n", c->pr.gpu.name, c->fit.n,
            c->check.n);
    cal_print_fit(out, &c->pr, fit, "log residual");
    fprintf(out, "runs simulated: %ld\n", c->evaluations);
    for (size_t i = 0; i < c->pr.p; i++)
        if (isnan(fit->sigma[i]))
            fprintf(out,
                    "%s: not pinned down by the runs (no run moves with it there, or it "
                    "is at the fit's bound, x/ 100 of its start)\n",
                    c->pr.param[i]->key);
    fprintf(out, "fitted runs, mean absolute error: %.1f %% -> %.1f %%\n",
            sim_cal_runs_mape(&c->fit, c->before), sim_cal_runs_mape(&c->fit, c->after));
    if (c->check.n)
        fprintf(out, "held-out runs, mean absolute error: %.1f %% -> %.1f %%\n",
                sim_cal_runs_mape(&c->check, c->check_before),
                sim_cal_runs_mape(&c->check, c->check_after));
    for (size_t i = 0; i < c->check.n; i++) {
        const sim_val_row *r = &c->check.rows[i];
        fprintf(out, "held out %s:%d %s: %+.1f %% -> %+.1f %%\n", r->file, r->line, r->id,
                error_pct(r, c->check_before[i]), error_pct(r, c->check_after[i]));
    }
    if (overlay)
        fprintf(out, "\noverlay: %s (use it: --set system.catalog_overlay=%s)\n", overlay, overlay);
}

static void json_rows(yajl_gen g, const char *key, const sim_val_table *t, const double *before,
                      const double *after)
{
    sim_json_key(g, key);
    yajl_gen_array_open(g);
    for (size_t i = 0; i < t->n; i++) {
        const sim_val_row *r = &t->rows[i];
        yajl_gen_map_open(g);
        sim_json_str(g, "id", r->id);
        sim_json_str(g, "file", r->file);
        sim_json_int(g, "line", r->line);
        sim_json_str(g, "metric", sim_val_metric_name(r->metric));
        sim_json_num(g, "measured", r->value);
        sim_json_num(g, "before", before[i]);
        sim_json_num(g, "after", after[i]);
        sim_json_num(g, "before_pct", error_pct(r, before[i]));
        sim_json_num(g, "after_pct", error_pct(r, after[i]));
        yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
}

static int write_json(const char *path, const sim_cal_runs *c, const mdl_fit_result *fit,
                      sim_err *err)
{
    yajl_gen g = sim_json_doc_open(err);
    if (!g) return SIM_ENOMEM;
    sim_json_str(g, "gpu", c->pr.gpu.name);
    sim_json_int(g, "runs", (long long)c->fit.n);
    cal_json_fit(g, &c->pr, fit);
    sim_json_int(g, "runs_simulated", c->evaluations);
    sim_json_num(g, "mape_before_pct", sim_cal_runs_mape(&c->fit, c->before));
    sim_json_num(g, "mape_after_pct", sim_cal_runs_mape(&c->fit, c->after));
    sim_json_num(g, "held_out_mape_before_pct", sim_cal_runs_mape(&c->check, c->check_before));
    sim_json_num(g, "held_out_mape_after_pct", sim_cal_runs_mape(&c->check, c->check_after));
    json_rows(g, "fitted", &c->fit, c->before, c->after);
    json_rows(g, "held_out", &c->check, c->check_before, c->check_after);
    yajl_gen_map_close(g);
    int rc = sim_json_write(g, path, err);
    yajl_gen_free(g);
    return rc;
}

int sim_cal_runs_main(const sim_cal_runs_args *a, sim_err *err)
{
    sim_cal_runs c;
    mdl_fit_result fit;
    int rc = sim_cal_runs_load(&c, a, stderr, err);
    if (!rc) rc = sim_cal_runs_fit(&c, &fit, err);
    if (!rc && a->overlay) {
        char header[256];
        snprintf(header, sizeof header,
                 "catalog overlay written by `epochsim calibrate` for %s from %zu measured "
                 "run(s)",
                 c.pr.gpu.name, c.fit.n);
        rc = cal_write_overlay(a->overlay, &c.pr, &fit, header, err);
    }
    if (!rc && a->json)
        rc = write_json(a->json, &c, &fit, err);
    else if (!rc)
        print_text(stdout, &c, &fit, a->overlay);
    sim_cal_runs_free(&c);
    return rc;
}
