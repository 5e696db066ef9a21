/* scenario.h — from an experiment (names and knobs) to a runnable scenario (resolved hardware
 * and one step's program): catalog look-ups, system presets, overrides and the workload. */
#ifndef SIM_SCENARIO_H
#define SIM_SCENARIO_H

#include "sim/setup/config.h"
#include "sim/core/run.h"

/* Fills sc from x. `set` says which keys the user gave (a named system fills only the others);
 * it may be NULL. The catalog is read from catalog_dir. */
int sim_scenario_build(const sim_experiment *x, const cfg_experiment_set *set,
                       const char *catalog_dir, sim_scenario *sc, sim_err *err);

/* The synthetic workload: kernels_per_step kernels of kernel_us each, dispatch_us of CPU each. */
int sim_synthetic_program(const sim_experiment *x, sim_program *out);

#endif
