/* test_fit.c — the least-squares fit alone (models/fit.h): it recovers the parameters of data
 * made by a known function, gives standard errors that shrink with noise-free data and grow with
 * noise, and refuses what it cannot fit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "models/fit.h"

#include <math.h>
#include <string.h>

/* y = a x + b, fitted as r_i = ln((a x_i + b) / y_i): the shape of a kernel's time (work over a
 * rate plus a fixed cost) with 1/a a rate and b a fixed cost. */
typedef struct line {
    double x[40], y[40];
    size_t n;
} line;

static int line_residuals(const double *theta, double *r, void *ctx)
{
    const line *d = ctx;
    for (size_t i = 0; i < d->n; i++)
        r[i] = log((theta[0] * d->x[i] + theta[1]) / d->y[i]);
    return 0;
}

static line make_line(double a, double b, double noise)
{
    line d = {.n = 40};
    for (size_t i = 0; i < d.n; i++) {
        d.x[i] = pow(10, (double)i / 8); /* 1 .. 1e5: both terms dominate somewhere */
        /* deterministic "noise": alternating signs, so the exact answer stays a, b */
        d.y[i] = (a * d.x[i] + b) * exp(noise * (i % 2 ? 1 : -1));
    }
    return d;
}

static void test_fit_recovers_known_parameters(void **state)
{
    (void)state;
    line d = make_line(3.0, 500.0, 0);
    double start[2] = {1.0, 50.0}; /* 3x and 10x off */
    mdl_fit_result f;
    sim_err err;
    assert_int_equal(mdl_fit(2, start, d.n, line_residuals, &d, &f, &err), 0);
    /* noise-free data: the optimum is exact; 1e-6 relative is the solver's xtol (1e-8) with room */
    assert_true(fabs(f.theta[0] / 3.0 - 1) < 1e-6);
    assert_true(fabs(f.theta[1] / 500.0 - 1) < 1e-6);
    assert_true(f.converged);
    assert_true(f.rms_start > 0.1 && f.rms_end < 1e-8);
    /* residuals ~0: the standard errors vanish (1e-6 relative: rounding of the residuals) */
    assert_true(f.sigma[0] < 1e-6 * 3.0 && f.sigma[1] < 1e-6 * 500.0);
}

static void test_fit_standard_errors_grow_with_noise(void **state)
{
    (void)state;
    double start[2] = {1.0, 50.0};
    mdl_fit_result quiet, noisy;
    line a = make_line(3.0, 500.0, 0.01), b = make_line(3.0, 500.0, 0.1);
    assert_int_equal(mdl_fit(2, start, a.n, line_residuals, &a, &quiet, NULL), 0);
    assert_int_equal(mdl_fit(2, start, b.n, line_residuals, &b, &noisy, NULL), 0);
    /* +-1 % and +-10 % alternating errors: the rms residual is the noise itself (closed form),
     * and the standard error scales with it (10x, within 20 % for the changed optimum) */
    assert_true(fabs(quiet.rms_end - 0.01) < 1e-3 && fabs(noisy.rms_end - 0.1) < 1e-2);
    double ratio = noisy.sigma[0] / quiet.sigma[0];
    assert_true(ratio > 8 && ratio < 12);
    /* alternating noise is symmetric in log space: the parameters stay near the truth (5 %) */
    assert_true(fabs(noisy.theta[0] / 3.0 - 1) < 0.05 && fabs(noisy.theta[1] / 500.0 - 1) < 0.05);
}

static int failing(const double *theta, double *r, void *ctx)
{
    (void)theta, (void)r, (void)ctx;
    return SIM_EIO;
}

static void test_fit_refuses_what_it_cannot_fit(void **state)
{
    (void)state;
    line d = make_line(3.0, 500.0, 0);
    mdl_fit_result f;
    sim_err err;
    double start[2] = {1.0, 50.0}, bad[2] = {1.0, 0.0};
    assert_int_equal(mdl_fit(2, start, 1, line_residuals, &d, &f, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "at least as many"));
    assert_int_equal(mdl_fit(2, bad, d.n, line_residuals, &d, &f, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "positive"));
    assert_int_equal(mdl_fit(2, start, d.n, failing, &d, &f, &err), SIM_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fit_recovers_known_parameters),
        cmocka_unit_test(test_fit_standard_errors_grow_with_noise),
        cmocka_unit_test(test_fit_refuses_what_it_cannot_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
