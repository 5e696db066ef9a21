/* advice.h — changes to try, each checked by simulating it: for the bottleneck a run names, the
 * experiment is run again with each candidate change (more workers, deeper prefetch, pinned
 * non-blocking copies, CUDA graphs, a larger batch) and a change is advised only when the
 * simulated throughput rises, with the gain it measured. */
#ifndef SIM_ADVICE_H
#define SIM_ADVICE_H

#include "sim/setup/config.h"
#include "sim/core/run.h"

/* Candidate changes per run at most. */
#define SIM_ADVICE_MAX 4
/* A change that gains less than this (% of samples/s) is not advice. */
#define SIM_ADVICE_MIN_GAIN_PCT 1.0

typedef struct sim_advice {
    char change[96];      /* `--set` assignments, space separated: "loader.num_workers=16" */
    double samples_per_s; /* simulated with the change */
    double gain_pct;      /* over the run's own samples/s, > SIM_ADVICE_MIN_GAIN_PCT */
} sim_advice;

/* Applies the space-separated `--set` assignments of change ("k1=v1 k2=v2", under 96
 * characters) to x. 0 or the first assignment's error. */
int sim_advice_apply(const char *change, sim_experiment *x, cfg_experiment_set *set, sim_err *err);

/* Simulates each candidate change for res->bottleneck on x (with set and catalog_dir, as
 * sc was built; res is sc's run) and writes those that help to out[0..SIM_ADVICE_MAX), largest
 * gain first. A candidate that cannot be run (it does not fit in GPU memory, a replayed trace
 * cannot take it, memory runs out) is not advice. Returns how many. */
int sim_advice_find(const sim_experiment *x, const cfg_experiment_set *set, const char *catalog_dir,
                    const sim_scenario *sc, const sim_result *res, sim_advice out[SIM_ADVICE_MAX]);

#endif
