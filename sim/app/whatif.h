/* whatif.h — `epochsim run FILE --vary KEY=V1,V2,...` (and a file's `sweep:` block under `run`):
 * the points go through the sweep driver (sweep_spec, sweep_run) into a temporary CSV, then a
 * table of the swept keys and the headline figures goes to stdout and, with a plot path, the
 * samples/s curve is drawn by the code of `epochsim plot`. One command for a what-if study. */
#ifndef SIM_WHATIF_H
#define SIM_WHATIF_H

#include "sim/app/sweep_spec.h"
#include "sim/base/err.h"
#include "sim/setup/config.h"

#include <stdbool.h>

typedef struct sim_whatif_opts {
    const char *catalog_dir;
    const char *plot_path; /* .png or .svg; NULL = no plot */
    bool quiet;            /* no progress bar (it shows only on a terminal anyway) */
} sim_whatif_opts;

/* Runs every point of spec on x (set: the keys the file and --set gave), prints the table and
 * draws the plot. Returns an exit code: SIM_EXIT_OK, or SIM_EXIT_ERROR when a point failed (its
 * row shows why), the driver failed or the plot could not be drawn. */
int sim_whatif_run(const sim_sweep_spec *spec, const sim_experiment *x,
                   const cfg_experiment_set *set, const sim_whatif_opts *o);

#endif
