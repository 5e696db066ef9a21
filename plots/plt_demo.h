/* plt_demo.h — the picture of a classroom demo (`epochsim demo NAME --plot FILE`): the epoch
 * time (of the epoch, or of the steps the experiment runs) and the GPU-Util of the two runs side by
 * side, so the change and its effect are seen at once; for a study (one key over several values),
 * the samples/s and GPU-Util curves against the value. */
#ifndef PLT_DEMO_H
#define PLT_DEMO_H

#include "plots/plt_gnuplot.h"

/* Draws two bar panels (the run's time in s; a utilization in %, its axis named util_label) for
 * the runs labelled label[0..1], titled title, to path (.png or .svg). A run that did not fit
 * in memory has time 0 and is labelled so. 0 or an error. */
int plt_demo_draw(const char *path, const char *title, const char *const label[2],
                  const double time_s[2], const double util_pct[2], const char *util_label,
                  sim_err *err);

/* Draws two curve panels against x[0..n) (labelled xlabel, log2 axis: the values double):
 * samples/s, and a utilization in % (its axis named util_label), titled title, to path (.png or
 * .svg). 0 or an error. */
int plt_demo_study_draw(const char *path, const char *title, const char *xlabel, size_t n,
                        const double *x, const double *samples_per_s, const double *util_pct,
                        const char *util_label, sim_err *err);

#endif
