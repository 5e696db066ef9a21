/* epoch_scenario.h — the scenario the epoch benchmarks time: one full ImageNet-sized epoch
 * (1,281,167 samples, batch 256, 320 kernels per step) of the synthetic ResNet-50-like job on the
 * test catalog (round-number devices, so the figure does not move with catalog edits). Used by
 * bench_epoch and bench_compare. */
#ifndef BENCH_EPOCH_SCENARIO_H
#define BENCH_EPOCH_SCENARIO_H

#include "sim/setup/scenario.h"

#include <stddef.h>

/* Samples in the epoch (dataset.samples below). */
#define BENCH_EPOCH_SAMPLES 1281167

/* Builds the scenario into *sc (free with sim_scenario_free); 0 or an error in *err. */
static inline int bench_epoch_scenario(sim_scenario *sc, sim_err *err)
{
    static const char *const sets[] = {
        "system.gpu=test-gpu",     "system.cpu=test-cpu-8c", "system.storage=test-nvme",
        "dataset.samples=1281167", "loader.batch_size=256",  "workload.kernels_per_step=320",
        "training.epochs=1",
    };
    sim_experiment x;
    cfg_experiment_set set = {0};
    sim_err_clear(err);
    sim_experiment_defaults(&x);
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        if (cfg_experiment_apply(sets[i], &x, &set, err)) return -1;
    return sim_scenario_build(&x, &set, EPOCHSIM_BENCH_CATALOG, sc, err);
}

#endif
