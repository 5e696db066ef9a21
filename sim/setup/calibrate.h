/* calibrate.h — fitting a GPU's catalog fields to kernels measured on it (`epochsim calibrate`).
 * Each kernel of a recorded trace whose work is known (FLOPs from its op's shapes for GEMM and
 * convolution kernels, bytes for memory-bound ones) is one observation: the cost model
 * (models/cost.h) prices it on the GPU's description, and the fit (models/fit.h) moves the named
 * catalog fields until the log ratios predicted / measured are least, each weighted by the
 * kernel's share of the measured time (so the fit serves step time, not kernel counts). */
#ifndef SIM_CALIBRATE_H
#define SIM_CALIBRATE_H

#include "models/cost.h"
#include "models/fit.h"
#include "sim/base/err.h"
#include "sim/core/hw.h"
#include "sim/setup/cfgtable.h"
#include "traces/trace.h"

#include <stdio.h>
#include <yajl/yajl_gen.h>

#include <stddef.h>

typedef struct cal_obs {
    mdl_kernel k;
    sim_precision precision;
    double measured_ns;
} cal_obs;

typedef struct cal_set {
    cal_obs *obs;
    size_t n, cap;
    size_t skipped; /* kernels left out: unknown work, no duration, or not a compute kernel */
    char gpu_name[TRC_STR_MAX]; /* the GPU the first trace recorded (deviceProperties name) */
} cal_set;

/* Appends the usable kernels of every step of a trace (native, or a Kineto .json[.gz], imported
 * on the way) to out. */
int cal_add_trace(const char *path, cal_set *out, sim_err *err);
void cal_set_free(cal_set *s);

/* What is fitted: numeric fields of the GPU's catalog entry, by name. */
typedef struct cal_problem {
    sim_gpu_desc gpu;                           /* the entry, before the fit */
    const cfg_field *param[MDL_FIT_MAX_PARAMS]; /* double fields of the GPU table */
    size_t p;
    const cal_set *data; /* the kernels; NULL when the caller fits other observations */
} cal_problem;

/* Adds the GPU field `name` to the fitted parameters: SIM_EINVAL when it is not a number field
 * of the GPU catalog, its value is not positive, or no observation of pr->data depends on it
 * (not checked when pr->data is NULL: the caller fits other observations and checks). */
int cal_add_param(cal_problem *pr, const char *name, sim_err *err);

/* The fitted parameters in out; out->theta is in the fields' own units. */
int cal_fit(const cal_problem *pr, mdl_fit_result *out, sim_err *err);

/* Sum of predicted / sum of measured kernel time of `data` on pr->gpu with parameters theta
 * (NULL = the entry's own values), minus 1: the error of the trace's kernel time. */
double cal_total_error(const cal_problem *pr, const cal_set *data, const double *theta);

/* The value of fitted field i in pr->gpu (the entry before the fit). */
double cal_param_start(const cal_problem *pr, size_t i);

/* The fit's figures as both calibrate modes print them: a table of field, start, fitted value
 * and standard error, then `what (rms): start -> end (N iterations, converged)`. */
void cal_print_fit(FILE *out, const cal_problem *pr, const mdl_fit_result *fit, const char *what);
/* The same as members of an open JSON object: "params" [{field, start, fitted, std_error}],
 * rms_start, rms_end, iterations, converged. */
void cal_json_fit(yajl_gen g, const cal_problem *pr, const mdl_fit_result *fit);

/* Writes a catalog overlay (sim/setup/overlay.h) setting the fitted fields of pr->gpu, whole or
 * not at all; `header` is a comment put at its top. */
int cal_write_overlay(const char *path, const cal_problem *pr, const mdl_fit_result *fit,
                      const char *header, sim_err *err);

#endif
