/* app.h — what every subcommand shares: its exit codes and where the hardware catalog is. The
 * command table (cli.h) includes the subcommands; they include this, not the table. */
#ifndef SIM_APP_H
#define SIM_APP_H

#include "sim/setup/config.h"

/* Exit codes: 0 ok, 1 simulation or config error, 2 usage error. */
enum { SIM_EXIT_OK = 0, SIM_EXIT_ERROR = 1, SIM_EXIT_USAGE = 2 };

/* The catalog directory: --catalog, else $EPOCHSIM_CATALOG, else the installed catalog beside the
 * binary (PREFIX/share/epochsim/configs/hardware for PREFIX/bin/epochsim, as `cmake --install`
 * lays it out), else the source tree's (the build-time default, for a binary run from its build
 * folder). */
const char *sim_app_catalog_dir(const char *from_flag);

/* The sampled mode's half-width when --sampled gives none, % of the epoch: half the 1 % that
 * the shipped experiments are held to (docs/sampled.md). */
#define SIM_APP_SAMPLED_PCT "0.5"

/* `--sampled[=PCT]` of run and sweep: the key run.sampled_pct applied to x as a --set would be
 * (pct NULL = SIM_APP_SAMPLED_PCT); an error names the option as the user wrote it. */
int sim_app_sampled(const char *pct, sim_experiment *x, cfg_experiment_set *set, sim_err *err);

#endif
