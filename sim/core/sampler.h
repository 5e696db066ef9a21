/* sampler.h — the statistics behind the sampled mode (sim_scenario.sampled_pct, run.h): an
 * epoch's step times in windows of equal step counts, the warm-up found by MSER (White 1997:
 * the cut that minimises the standard error of what is left) and dropped, and a batch-means
 * 95 % interval on the time the rest of the epoch takes (Student's t over the window means,
 * widened for their lag-1 autocorrelation), as SMARTS (Wunderlich et al., ISCA 2003) bounds its
 * estimate. run.c decides from it when the rest of an epoch may be extrapolated. */
#ifndef SIM_SAMPLER_H
#define SIM_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

/* Windows an estimate rests on at least: with fewer, Student's t and the sample variance are
 * too loose to trust (t(0.975, 7) = 2.36 against 1.96 for many). */
#define SIM_SAMPLER_MIN_WINDOWS 8

typedef struct sim_sampler {
    int window_steps;
    int64_t acc_ns; /* steps of the open window, summed */
    int in_window;  /* steps in the open window */
    double *means;  /* closed windows' mean step time, ns */
    int n, cap;
} sim_sampler;

typedef struct sim_sampler_est {
    int warmup;     /* leading windows dropped (at least the first: it holds the epoch's start) */
    int kept;       /* windows the estimate rests on: warmup .. warmup + kept - 1 */
    double mean_ns; /* steady step time */
    double t;       /* Student's t(0.975, kept - 1) */
    double window_var; /* variance of one window's mean step time, ns^2, widened for correlation */
    double window_var_high; /* its 95 % upper confidence limit (chi-square, kept - 1 degrees of
                             * freedom): what the interval rests on */
} sim_sampler_est;

/* The window length for an epoch of `steps` steps whose loader repeats itself every
 * cycle_steps steps (batch b comes from worker b mod N: a round of the workers): steps / 40,
 * from 5 to 20 steps, so that a short epoch still has room for a warm-up and
 * SIM_SAMPLER_MIN_WINDOWS windows, rounded up to whole rounds, so that every window holds the
 * same share of each worker's batches (else window means alternate, and their spread says
 * nothing about the mean's). */
int sim_sampler_window_steps(int64_t steps, int cycle_steps);

/* Starts empty with windows of window_steps (>= 1) steps. Nothing is allocated yet. */
void sim_sampler_init(sim_sampler *s, int window_steps);
/* Forgets the windows (a new epoch); keeps the window length. */
void sim_sampler_reset(sim_sampler *s);
void sim_sampler_free(sim_sampler *s);

/* Adds one step of dur_ns. Returns 1 when it closed a window, 0 when not, SIM_ENOMEM. */
int sim_sampler_add(sim_sampler *s, int64_t dur_ns);

/* The estimate from the closed windows. False while there is no steady state to rest on: fewer
 * than 1 + SIM_SAMPLER_MIN_WINDOWS windows, MSER's cut in the later half (the step time still
 * drifts), or window means so correlated (lag 1 above 0.9) that they are one trend. */
bool sim_sampler_estimate(const sim_sampler *s, sim_sampler_est *est);

/* The 95 % half-width, ns, of a prediction of the time `steps` more steps take (steps x
 * mean_ns): the mean's own uncertainty times steps, and the spread of those steps around the
 * mean, since they are one draw (as a full simulation's are), not their expectation:
 * t x sqrt(steps^2 x v / kept + steps x window_steps x v), with v = window_var_high. The upper
 * limit of the variance, not its estimate: the run stops at the first window whose interval is
 * narrow enough, which favours windows that happen to vary little; on a 1,000-point sweep the
 * estimate left 11 % of the full runs outside their 95 % interval, the upper limit 6 %
 * (docs/sampled.md). */
double sim_sampler_half_ahead(const sim_sampler *s, const sim_sampler_est *est, int64_t steps);

#endif
