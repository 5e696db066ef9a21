/* fit.h — nonlinear least squares over positive parameters, for `epochsim calibrate`.
 * The caller gives residuals r_i(theta) (e.g. log(predicted / measured) per observation); the
 * fit runs GSL's trust-region solver (gsl_multifit_nlinear, Levenberg-Marquardt with geodesic
 * acceleration off, finite-difference Jacobian) in log space, so every parameter stays
 * positive, and reports each parameter's standard error from the covariance at the optimum. */
#ifndef MDL_FIT_H
#define MDL_FIT_H

#include "sim/base/err.h"

#include <stddef.h>

#define MDL_FIT_MAX_PARAMS 16

/* r gets n residuals for parameters theta (p values, all > 0); returns 0, or an SIM_E* code
 * that stops the fit. */
typedef int (*mdl_fit_residuals)(const double *theta, double *r, void *ctx);

typedef struct mdl_fit_result {
    double theta[MDL_FIT_MAX_PARAMS]; /* fitted values */
    double sigma[MDL_FIT_MAX_PARAMS]; /* standard errors (same units); NaN when not defined */
    double rms_start, rms_end;        /* root-mean-square residual before and after */
    int iterations;
    int converged; /* 1 = the solver met its tolerances */
} mdl_fit_result;

/* Fits p parameters (start values theta0, > 0) to n >= p residuals. Returns 0 with out filled;
 * SIM_EINVAL for bad sizes or a non-positive start; the residual function's error; SIM_ENOMEM. */
int mdl_fit(size_t p, const double *theta0, size_t n, mdl_fit_residuals f, void *ctx,
            mdl_fit_result *out, sim_err *err);

#endif
