/* fit.c — the least-squares fit of fit.h on GSL's gsl_multifit_nlinear.
 * Parameters are solved for as u = ln(theta): a multiplicative scale is what an efficiency or a
 * fixed cost can be wrong by, and the log keeps them positive without constraints. */
#include "models/fit.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Solver tolerances (GSL manual, "Testing for Convergence": xtol ~ 1e-8 asks for about 8 correct
 * digits of each parameter; gtol = epsilon^(1/3) is the manual's suggestion) and an iteration cap
 * far above what the few-parameter fits here need (they converge in 5-30 iterations). */
#define FIT_XTOL 1e-8
#define FIT_FTOL 0.0
#define FIT_MAXITER 200

typedef struct fit_ctx {
    mdl_fit_residuals f;
    void *user;
    size_t p;
    double *buf; /* n residuals */
    int error;   /* the residual function's first error */
} fit_ctx;

static int log_residuals(const gsl_vector *u, void *data, gsl_vector *r)
{
    fit_ctx *c = data;
    double theta[MDL_FIT_MAX_PARAMS];
    for (size_t i = 0; i < c->p; i++)
        theta[i] = exp(gsl_vector_get(u, i));
    /* r may be a column of the Jacobian (stride p) when GSL differentiates: fill a contiguous
     * buffer and copy. */
    int rc = c->f(theta, c->buf, c->user);
    if (rc) {
        if (!c->error) c->error = rc;
        return GSL_EBADFUNC;
    }
    for (size_t i = 0; i < r->size; i++) {
        if (!isfinite(c->buf[i])) return GSL_EBADFUNC;
        gsl_vector_set(r, i, c->buf[i]);
    }
    return GSL_SUCCESS;
}

static double rms(const gsl_vector *r)
{
    return gsl_blas_dnrm2(r) / sqrt((double)r->size);
}

/* Standard errors of theta from the covariance of u at the optimum, scaled by the residual
 * variance (chi^2 / (n - p)); d theta = theta d u. NaN when n == p (no degrees of freedom). */
static int standard_errors(gsl_multifit_nlinear_workspace *w, size_t n, size_t p,
                           mdl_fit_result *out)
{
    gsl_matrix *covar = gsl_matrix_alloc(p, p);
    if (!covar) return SIM_ENOMEM;
    gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w), 0.0, covar);
    double chi = gsl_blas_dnrm2(gsl_multifit_nlinear_residual(w));
    double var = n > p ? chi * chi / (double)(n - p) : NAN;
    for (size_t i = 0; i < p; i++)
        out->sigma[i] = out->theta[i] * sqrt(var * gsl_matrix_get(covar, i, i));
    gsl_matrix_free(covar);
    return SIM_OK;
}

int mdl_fit(size_t p, const double *theta0, size_t n, mdl_fit_residuals f, void *ctx,
            mdl_fit_result *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    if (p < 1 || p > MDL_FIT_MAX_PARAMS || n < p)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                           "a fit of %zu parameter(s) needs at least as many measurements (%zu "
                           "given) and at most %d parameters",
                           p, n, MDL_FIT_MAX_PARAMS);
    for (size_t i = 0; i < p; i++)
        if (!(theta0[i] > 0) || !isfinite(theta0[i]))
            return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                               "parameter %zu starts at %g: a fitted parameter must be positive",
                               i + 1, theta0[i]);
    fit_ctx c = {.f = f, .user = ctx, .p = p, .buf = malloc(n * sizeof(double))};
    gsl_multifit_nlinear_fdf fdf = {.f = log_residuals, .n = n, .p = p, .params = &c};
    gsl_multifit_nlinear_parameters params = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &params, n, p);
    gsl_vector *u = gsl_vector_alloc(p);
    if (!w || !u || !c.buf) {
        gsl_multifit_nlinear_free(w);
        gsl_vector_free(u);
        free(c.buf);
        return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    for (size_t i = 0; i < p; i++)
        gsl_vector_set(u, i, log(theta0[i]));
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int rc = SIM_OK, info = 0;
    int status = gsl_multifit_nlinear_init(u, &fdf, w);
    if (status == GSL_SUCCESS) {
        out->rms_start = rms(gsl_multifit_nlinear_residual(w));
        status = gsl_multifit_nlinear_driver(FIT_MAXITER, FIT_XTOL, GSL_ROOT3_DBL_EPSILON, FIT_FTOL,
                                             NULL, NULL, &info, w);
    }
    gsl_set_error_handler(old);
    if (c.error)
        rc = c.error;
    else if (status != GSL_SUCCESS && status != GSL_EMAXITER)
        rc = sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "the fit failed: %s (GSL)",
                         gsl_strerror(status));
    if (rc == SIM_OK) {
        const gsl_vector *x = gsl_multifit_nlinear_position(w);
        for (size_t i = 0; i < p; i++)
            out->theta[i] = exp(gsl_vector_get(x, i));
        out->rms_end = rms(gsl_multifit_nlinear_residual(w));
        out->iterations = (int)gsl_multifit_nlinear_niter(w);
        out->converged = status == GSL_SUCCESS;
        rc = standard_errors(w, n, p, out);
        if (rc) sim_err_set(err, rc, NULL, 0, 0, "out of memory");
    }
    gsl_multifit_nlinear_free(w);
    gsl_vector_free(u);
    free(c.buf);
    return rc;
}
