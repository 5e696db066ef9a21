/* calibrate_runs.h — `epochsim calibrate --runs`: fitting number fields of one GPU's catalog
 * entry to whole training runs measured on it, rows in the published table's format
 * (validate.h). Each row is predicted exactly as `epochsim validate` predicts it, with the GPU
 * entry replaced by the trial values; the fit (models/fit.h) minimises the sum over rows of
 * ln(predicted / measured)^2, every row weighted equally. Each row's experiment and scenario are
 * built once and only re-priced and simulated per evaluation, rows on parallel threads. */
#ifndef SIM_CALIBRATE_RUNS_H
#define SIM_CALIBRATE_RUNS_H

#include "models/fit.h"
#include "sim/app/validate.h"
#include "sim/base/err.h"
#include "sim/setup/calibrate.h"

#include <stdio.h>

#define SIM_CAL_RUNS_MAX_FILES 64

/* What the command line asked for (borrowed strings). */
typedef struct sim_cal_runs_args {
    const char *runs[SIM_CAL_RUNS_MAX_FILES], *checks[SIM_CAL_RUNS_MAX_FILES];
    int n_runs, n_checks;
    const char *const *params; /* --param names; n_params == 0: the defaults */
    int n_params;
    const char *gpu;     /* --gpu, or NULL: the rows' GPU */
    const char *catalog; /* the hardware catalog folder */
    int threads;         /* rows priced at once; <= 0: one per online CPU */
    const char *overlay; /* -o: the catalog overlay to write, or NULL */
    const char *json;    /* --json PATH or "-", or NULL: the text report on stdout */
} sim_cal_runs_args;

/* A fit in progress: the rows, their prepared scenarios, the GPU entry and fitted fields. */
typedef struct sim_cal_runs {
    sim_val_table fit, check; /* --runs rows, --check-runs rows */
    sim_val_prepared **prep;  /* one per fit row */
    cal_problem pr;           /* the GPU entry before the fit and the fitted fields (no kernels) */
    const char *catalog;
    int threads;
    double *before, *after; /* fit rows' predictions on the entry and on the fitted fields */
    double *check_before, *check_after;
    long evaluations;          /* rows priced during the fit */
    const sim_val_row *failed; /* the row a trial point of the fit could not price, or NULL */
} sim_cal_runs;

/* Reads the --runs and --check-runs files, checks that every row is a training run
 * (samples_per_s or step_ms) on one catalog GPU (--gpu's when given), loads that GPU's entry,
 * builds every fit row's scenario and predicts it on the entry; then adds the fitted fields
 * (a->params, or the defaults: kernel_overhead_us, the peak rates the rows' precisions use,
 * mem_bw_gbps; a default no row depends on is reported on `notes` and left out). Errors name
 * file:line of the row: another GPU, another metric, a row that cannot be predicted, a --param
 * that is no number field or that no row depends on, fewer rows than fields. c is filled even
 * on failure; free it with sim_cal_runs_free. */
int sim_cal_runs_load(sim_cal_runs *c, const sim_cal_runs_args *a, FILE *notes, sim_err *err);

/* Runs the fit. out->theta and out->sigma are in the fields' units; fills c->after and the
 * held-out rows' predictions before and after. */
int sim_cal_runs_fit(sim_cal_runs *c, mdl_fit_result *out, sim_err *err);

void sim_cal_runs_free(sim_cal_runs *c);

/* The whole command: load, fit, the overlay (a->overlay), the report (text on stdout, or JSON
 * to a->json); notes on stderr. Returns 0 or the first error. */
int sim_cal_runs_main(const sim_cal_runs_args *a, sim_err *err);

/* Mean of |predicted / measured - 1| over rows, percent (NaN entries skipped). */
double sim_cal_runs_mape(const sim_val_table *t, const double *pred);

#endif
