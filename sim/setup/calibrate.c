/* calibrate.c — observations from traces, named catalog parameters, the fit and the overlay
 * (see calibrate.h). */
#include "sim/setup/calibrate.h"

#include "sim/base/json.h"
#include "sim/base/outfile.h"
#include "sim/setup/catalog.h"
#include "traces/kclass.h"
#include "traces/kineto.h"
#include "traces/trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ---- observations ------------------------------------------------------------------------ */

static int push(cal_set *s, const cal_obs *o)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        cal_obs *a = realloc(s->obs, cap * sizeof *a);
        if (!a) return SIM_ENOMEM;
        s->obs = a;
        s->cap = cap;
    }
    s->obs[s->n++] = *o;
    return SIM_OK;
}

/* A recorded kernel as the cost model sees it (as the replay builds it: sim/setup/
 * replay_workload.c), or 0 when its work is unknown. Precision from the kernel's name, else the
 * trace's. */
static int observation(const trc_step *s, const trc_record *r, sim_precision trace_p, cal_obs *o)
{
    sim_unit unit = (sim_unit)r->unit;
    int compute = unit == SIM_UNIT_TENSOR || unit == SIM_UNIT_CUDA;
    if (r->gpu_dur_ns <= 0 || !(compute ? r->flops > 0 : unit == SIM_UNIT_MEMORY && r->bytes > 0))
        return 0;
    const char *name = trc_step_rec_name(s, r);
    const char *np = name ? trc_kernel_precision(name) : NULL;
    sim_precision p = trace_p;
    if (np && sim_precision_parse(np, &p)) p = trace_p;
    *o = (cal_obs){
        .k = {.kind = SIM_OP_KERNEL,
              .math = !compute                           ? MDL_MATH_SIMT
                      : name && trc_kernel_is_conv(name) ? MDL_MATH_CONV
                                                         : MDL_MATH_GEMM,
              /* unknown grid: so many blocks that the last wave's idle SMs do not matter */
              .blocks = r->blocks > 0 ? (double)r->blocks : 1e9,
              .flops = compute ? r->flops : 0,
              .bytes = r->bytes > 0 ? r->bytes : 0},
        .precision = p,
        .measured_ns = (double)r->gpu_dur_ns,
    };
    return 1;
}

int cal_add_trace(const char *path, cal_set *out, sim_err *err)
{
    char tmp[1024];
    int rc = trc_import_temp(path, "calibrate", tmp, sizeof tmp, err);
    if (rc) return rc;
    trc_reader *r;
    rc = trc_reader_open(tmp[0] ? tmp : path, &r, err);
    trc_import_temp_drop(tmp); /* the reader holds the file open */
    if (rc) return rc;
    if (!out->gpu_name[0])
        snprintf(out->gpu_name, sizeof out->gpu_name, "%s", trc_reader_header(r)->gpu_name);
    sim_precision trace_p = SIM_PREC_FP32;
    if (sim_precision_parse(trc_reader_header(r)->precision, &trace_p)) trace_p = SIM_PREC_FP32;
    const trc_step *s;
    while ((rc = trc_reader_next_step(r, &s, err)) == 1) {
        for (size_t i = 0; i < s->n_recs; i++) {
            const trc_record *rec = &s->recs[i];
            if (rec->kind != TRC_REC_KERNEL) continue;
            cal_obs o;
            if (!observation(s, rec, trace_p, &o))
                out->skipped++;
            else if (push(out, &o)) {
                rc = sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
                break;
            }
        }
        if (rc < 0) break;
    }
    trc_reader_close(r);
    return rc < 0 ? rc : SIM_OK;
}

void cal_set_free(cal_set *s)
{
    free(s->obs);
    memset(s, 0, sizeof *s);
}

/* ---- parameters -------------------------------------------------------------------------- */

static double *field(sim_gpu_desc *g, const cfg_field *f)
{
    return (double *)((char *)g + f->offset);
}

/* The GPU with theta written into the fitted fields. */
static sim_gpu_desc with_theta(const cal_problem *pr, const double *theta)
{
    sim_gpu_desc g = pr->gpu;
    for (size_t i = 0; theta && i < pr->p; i++)
        *field(&g, pr->param[i]) = theta[i];
    return g;
}

/* The cost model's time before rounding to whole ns: the fit's finite differences need a
 * function that moves with every parameter, however little. */
static double predicted_ns(const cal_obs *o, const sim_gpu_desc *g)
{
    mdl_cost c;
    mdl_kernel_cost(&o->k, g, o->precision, &c);
    return c.ns;
}

/* 1 if some observation's predicted time moves when the parameter moves by 10 %. */
static int matters(const cal_problem *pr, const cfg_field *f)
{
    sim_gpu_desc g = pr->gpu;
    *field(&g, f) *= 1.1;
    for (size_t i = 0; i < pr->data->n; i++)
        if (predicted_ns(&pr->data->obs[i], &g) != predicted_ns(&pr->data->obs[i], &pr->gpu))
            return 1;
    return 0;
}

int cal_add_param(cal_problem *pr, const char *name, sim_err *err)
{
    const cfg_field *f = cfg_table_find(cfg_catalog_table(CFG_CAT_GPU), name, NULL);
    if (!f || f->type != CFG_T_DOUBLE)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                           "--param %s: not a number field of a GPU catalog entry (see "
                           "`epochsim hw show %s`)",
                           name, pr->gpu.name);
    if (pr->p == MDL_FIT_MAX_PARAMS)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "at most %d parameters",
                           MDL_FIT_MAX_PARAMS);
    if (!(*field(&pr->gpu, f) > 0))
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                           "--param %s: %s has %g there; a fitted value must start positive", name,
                           pr->gpu.name, *field(&pr->gpu, f));
    if (pr->data && !matters(pr, f))
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                           "--param %s: no measured kernel depends on it, so the data cannot "
                           "fit it",
                           name);
    pr->param[pr->p++] = f;
    return SIM_OK;
}

/* ---- the fit ----------------------------------------------------------------------------- */

/* r_i = sqrt(w_i) ln(predicted_i / measured_i), w_i = measured_i / mean measured (the weights add
 * up to n), and one more, r_n = 10 sqrt(n) ln(sum predicted / sum measured), for the kernels'
 * total, which is what a replay adds up: a 1 % error in it costs as much as a 10 % log error on
 * every kernel, so the fit holds the total to about a percent and spends the parameters' freedom
 * on the spread. The log residuals alone centre the time-weighted geometric mean of the ratios,
 * which with a spread s of the log ratios leaves the total about exp(s^2 / 2) high: +10 % on the
 * V100 ResNet-50 traces (s = 0.44), measured before this term was added. */
static int residuals(const double *theta, double *r, void *ctx)
{
    const cal_problem *pr = ctx;
    sim_gpu_desc g = with_theta(pr, theta);
    size_t n = pr->data->n;
    double mean = 0, pred = 0, meas = 0;
    for (size_t i = 0; i < n; i++)
        mean += pr->data->obs[i].measured_ns / (double)n;
    for (size_t i = 0; i < n; i++) {
        const cal_obs *o = &pr->data->obs[i];
        double p = predicted_ns(o, &g);
        r[i] = sqrt(o->measured_ns / mean) * log(p / o->measured_ns);
        pred += p;
        meas += o->measured_ns;
    }
    r[n] = 10 * sqrt((double)n) * log(pred / meas);
    return SIM_OK;
}

int cal_fit(const cal_problem *pr, mdl_fit_result *out, sim_err *err)
{
    double theta0[MDL_FIT_MAX_PARAMS];
    for (size_t i = 0; i < pr->p; i++)
        theta0[i] = *field((sim_gpu_desc *)&pr->gpu, pr->param[i]);
    return mdl_fit(pr->p, theta0, pr->data->n + 1, residuals, (void *)pr, out, err);
}

double cal_total_error(const cal_problem *pr, const cal_set *data, const double *theta)
{
    sim_gpu_desc g = with_theta(pr, theta);
    double pred = 0, meas = 0;
    for (size_t i = 0; i < data->n; i++) {
        pred += predicted_ns(&data->obs[i], &g);
        meas += data->obs[i].measured_ns;
    }
    return meas > 0 ? pred / meas - 1 : NAN;
}

double cal_param_start(const cal_problem *pr, size_t i)
{
    return *field((sim_gpu_desc *)&pr->gpu, pr->param[i]);
}

void cal_print_fit(FILE *out, const cal_problem *pr, const mdl_fit_result *fit, const char *what)
{
    fprintf(out, "%-22s %12s %12s %12s\n", "field", "start", "fitted", "std. error");
    for (size_t i = 0; i < pr->p; i++)
        fprintf(out, "%-22s %12.5g %12.5g %12.3g\n", pr->param[i]->key, cal_param_start(pr, i),
                fit->theta[i], fit->sigma[i]);
    fprintf(out, "\n%s (rms): %.4f -> %.4f (%d iterations%s)\n", what, fit->rms_start, fit->rms_end,
            fit->iterations, fit->converged ? ", converged" : ", iteration limit");
}

void cal_json_fit(yajl_gen g, const cal_problem *pr, const mdl_fit_result *fit)
{
    sim_json_key(g, "params");
    yajl_gen_array_open(g);
    for (size_t i = 0; i < pr->p; i++) {
        yajl_gen_map_open(g);
        sim_json_str(g, "field", pr->param[i]->key);
        sim_json_num(g, "start", cal_param_start(pr, i));
        sim_json_num(g, "fitted", fit->theta[i]);
        sim_json_num(g, "std_error", fit->sigma[i]);
        yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
    sim_json_num(g, "rms_start", fit->rms_start);
    sim_json_num(g, "rms_end", fit->rms_end);
    sim_json_int(g, "iterations", fit->iterations);
    sim_json_bool(g, "converged", fit->converged);
}

/* ---- the overlay ------------------------------------------------------------------------- */

static int emit_scalar(yaml_emitter_t *em, const char *s)
{
    yaml_event_t ev;
    yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1,
                                 YAML_PLAIN_SCALAR_STYLE);
    return yaml_emitter_emit(em, &ev);
}

static int emit_map(yaml_emitter_t *em, int open)
{
    yaml_event_t ev;
    if (open)
        yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
    else
        yaml_mapping_end_event_initialize(&ev);
    return yaml_emitter_emit(em, &ev);
}

static int emit_doc(yaml_emitter_t *em, const cal_problem *pr, const mdl_fit_result *fit)
{
    yaml_event_t ev;
    int ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) &&
             yaml_emitter_emit(em, &ev) &&
             yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) &&
             yaml_emitter_emit(em, &ev) && emit_map(em, 1) && emit_scalar(em, "gpus") &&
             emit_map(em, 1) && emit_scalar(em, pr->gpu.name) && emit_map(em, 1);
    for (size_t i = 0; ok && i < pr->p; i++) {
        char v[32];
        snprintf(v, sizeof v, "%.6g", fit->theta[i]);
        ok = emit_scalar(em, pr->param[i]->key) && emit_scalar(em, v);
    }
    return ok && emit_map(em, 0) && emit_map(em, 0) && emit_map(em, 0) &&
           yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(em, &ev) &&
           yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(em, &ev) &&
           yaml_emitter_flush(em);
}

int cal_write_overlay(const char *path, const cal_problem *pr, const mdl_fit_result *fit,
                      const char *header, sim_err *err)
{
    sim_outfile o;
    int rc = sim_outfile_open(&o, path, err);
    if (rc) return rc;
    for (const char *line = header; line && *line;) {
        size_t n = strcspn(line, "\n");
        fprintf(o.fp, "# %.*s\n", (int)n, line);
        line += n + (line[n] == '\n');
    }
    yaml_emitter_t em;
    int ok = yaml_emitter_initialize(&em);
    if (ok) {
        yaml_emitter_set_output_file(&em, o.fp);
        yaml_emitter_set_unicode(&em, 1);
        ok = emit_doc(&em, pr, fit);
        yaml_emitter_delete(&em);
    }
    if (!ok) {
        sim_outfile_abort(&o);
        return sim_err_set(err, SIM_EIO, path, 0, 0, "cannot write the overlay (libyaml)");
    }
    return sim_outfile_commit(&o, err);
}
