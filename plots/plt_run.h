/* plt_run.h — the plots of one run (`epochsim run --plot [KIND:]PATH`): `util`, GPU-Util, CPU
 * utilization and the loader's ready-batch queue over time; `timeline`, a Gantt chart of the
 * first steps (workers, pin thread, main thread, PCIe, GPU stream, storage) with the GPU's idle
 * gaps marked, so one sees at a glance what the GPU waits for. */
#ifndef PLT_RUN_H
#define PLT_RUN_H

#include "plots/plt_gnuplot.h"
#include "sim/core/run.h"
#include "sim/core/timeline.h"

/* Steps recorded for --timeline and --plot timeline unless --timeline-steps says otherwise:
 * enough to show the loader's start-up and a few steady steps; a few MB of JSON for the
 * default scenario (see README "Timeline and plots"). */
#define PLT_TIMELINE_STEPS_DEFAULT 10

typedef enum plt_run_kind { PLT_RUN_UTIL, PLT_RUN_TIMELINE } plt_run_kind;

typedef struct plt_run_plot {
    plt_run_kind kind;
    const char *path; /* borrowed from the command line */
    plt_term term;
} plt_run_plot;

/* Parses "util:PATH", "timeline:PATH", or PATH whose file name starts with util or timeline;
 * the format comes from the extension (.png, .svg). 0 or SIM_EUSAGE. */
int plt_run_plot_parse(const char *arg, plt_run_plot *p, sim_err *err);
/* Draws it. `series` is needed for util, `tl` (recorded) for timeline. */
int plt_run_draw(const plt_run_plot *p, const sim_scenario *sc, const sim_result *res,
                 const sim_run_series *series, const sim_timeline *tl, sim_err *err);

#endif
