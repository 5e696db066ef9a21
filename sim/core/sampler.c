/* sampler.c — windows, MSER and the batch-means interval of the sampled mode (see sampler.h).
 * Everything is a pure function of the window means, so a run's decisions depend on its steps
 * alone and the same inputs give the same cut. */
#include "sim/core/sampler.h"

#include "sim/base/err.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>

/* Lag-1 autocorrelation above this: the windows are one trend, not a sample. */
#define MAX_LAG1 0.9

int sim_sampler_window_steps(int64_t steps, int cycle_steps)
{
    int64_t w = steps / 40;
    w = w < 5 ? 5 : w > 20 ? 20 : w;
    if (cycle_steps < 1) cycle_steps = 1;
    return (int)((w + cycle_steps - 1) / cycle_steps * cycle_steps);
}

void sim_sampler_init(sim_sampler *s, int window_steps)
{
    *s = (sim_sampler){.window_steps = window_steps};
}

void sim_sampler_reset(sim_sampler *s)
{
    s->acc_ns = 0;
    s->in_window = 0;
    s->n = 0;
}

void sim_sampler_free(sim_sampler *s)
{
    free(s->means);
    s->means = NULL;
    s->n = s->cap = 0;
}

int sim_sampler_add(sim_sampler *s, int64_t dur_ns)
{
    s->acc_ns += dur_ns;
    if (++s->in_window < s->window_steps) return 0;
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        double *m = realloc(s->means, (size_t)cap * sizeof *m);
        if (!m) return SIM_ENOMEM;
        s->means = m;
        s->cap = cap;
    }
    s->means[s->n++] = (double)s->acc_ns / s->window_steps;
    s->acc_ns = 0;
    s->in_window = 0;
    return 1;
}

/* Mean of m[d .. n). */
static double mean_from(const double *m, int d, int n)
{
    double sum = 0;
    for (int i = d; i < n; i++)
        sum += m[i];
    return sum / (n - d);
}

/* MSER's statistic for dropping m[0 .. d): the squared deviations of what is left over its
 * count squared (its standard error squared, up to a constant). */
static double mser(const double *m, int d, int n)
{
    double mean = mean_from(m, d, n), ss = 0;
    for (int i = d; i < n; i++)
        ss += (m[i] - mean) * (m[i] - mean);
    return ss / ((double)(n - d) * (n - d));
}

bool sim_sampler_estimate(const sim_sampler *s, sim_sampler_est *est)
{
    const double *m = s->means;
    int n = s->n;
    if (n < 1 + SIM_SAMPLER_MIN_WINDOWS) return false;
    int best = 1; /* the first window always goes: it holds the epoch's start */
    double best_z = mser(m, 1, n);
    for (int d = 2; d <= n / 2; d++) {
        double z = mser(m, d, n);
        if (z < best_z) {
            best_z = z;
            best = d;
        }
    }
    int k = n - best;
    if (best == n / 2 || k < SIM_SAMPLER_MIN_WINDOWS) return false; /* still drifting */
    double mean = mean_from(m, best, n), ss = 0, lag = 0;
    for (int i = best; i < n; i++) {
        ss += (m[i] - mean) * (m[i] - mean);
        if (i + 1 < n) lag += (m[i] - mean) * (m[i + 1] - mean);
    }
    double r1 = ss > 0 ? lag / ss : 0;
    if (r1 > MAX_LAG1) return false;
    /* Var(mean) of an AR(1)-like sequence: s^2 / k x (1 + r1) / (1 - r1). */
    double widen = r1 > 0 ? (1 + r1) / (1 - r1) : 1;
    double var = ss / (k - 1) * widen;
    double t = gsl_cdf_tdist_Pinv(0.975, k - 1);
    *est = (sim_sampler_est){.warmup = best,
                             .kept = k,
                             .mean_ns = mean,
                             .t = t,
                             .window_var = var,
                             .window_var_high = var * (k - 1) / gsl_cdf_chisq_Pinv(0.05, k - 1)};
    return true;
}

double sim_sampler_half_ahead(const sim_sampler *s, const sim_sampler_est *est, int64_t steps)
{
    double n = (double)steps, var = est->window_var_high;
    return est->t * sqrt(n * n * var / est->kept + n * s->window_steps * var);
}
