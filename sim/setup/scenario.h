/* scenario.h — from an experiment (names and knobs) to a runnable scenario (resolved hardware
 * and one step's program): catalog look-ups, system presets, overrides and the workload. */
#ifndef SIM_SCENARIO_H
#define SIM_SCENARIO_H

#include "sim/setup/config.h"
#include "sim/core/run.h"

/* Fills sc from x. `set` says which keys the user gave (a named system fills only the others);
 * it may be NULL. The catalog is read from catalog_dir. A dataset in memory that does not fit
 * in host RAM (sim_host_ram_left_gb < 0) is an error at dataset.location. */
int sim_scenario_build(const sim_experiment *x, const cfg_experiment_set *set,
                       const char *catalog_dir, sim_scenario *sc, sim_err *err);

/* sim_scenario_build with the GPU entry replaced by *gpu (after the catalog and any overlay);
 * gpu = NULL is sim_scenario_build. Everything priced on the GPU (the program, the memory
 * verdict) is priced on *gpu. */
int sim_scenario_build_gpu(const sim_experiment *x, const cfg_experiment_set *set,
                           const char *catalog_dir, const sim_gpu_desc *gpu, sim_scenario *sc,
                           sim_err *err);

/* Re-prices sc, built from the same x, set and catalog_dir, on *gpu: the result equals
 * sim_scenario_build_gpu(x, set, catalog_dir, gpu) without reading the experiment's catalog
 * entries again (a zoo model's program and memory are rebuilt; a trace or synthetic workload
 * is built again whole). On an error sc holds no program; free it with sim_scenario_free. */
int sim_scenario_reprice(const sim_experiment *x, const cfg_experiment_set *set,
                         const char *catalog_dir, const sim_gpu_desc *gpu, sim_scenario *sc,
                         sim_err *err);

/* The synthetic workload: kernels_per_step kernels of kernel_us each, dispatch_us of CPU each. */
int sim_synthetic_program(const sim_experiment *x, sim_program *out);

/* The hardware of named system SYSTEM as a run would resolve it (lanes, topology, link), with
 * the `key=value` assignments of sets[0..n_sets-1] applied on top (e.g. "system.gpu_count=2",
 * "system.nvlink=bridge"). Errors name the system or the assignment. */
int sim_system_hardware(const char *dir, const char *system, const char *const *sets, int n_sets,
                        sim_hardware *hw, sim_err *err);

#endif
