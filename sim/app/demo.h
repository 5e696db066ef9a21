/* demo.h — the classroom demos (`epochsim demo`). A demo is a plain experiment file under
 * configs/experiments that a teacher can copy, one change that teaches a lesson, and the size of
 * the effect the lesson claims (the gain: before / after epoch time). `demo NAME` simulates both;
 * tests/app/test_demo.c checks every claim the same way. A study demo varies one key over a list
 * of values instead (the batch-size sweep): its gain is the best throughput over the first. */
#ifndef SIM_DEMO_H
#define SIM_DEMO_H

#include "sim/base/err.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct sim_demo {
    const char *name;       /* `epochsim demo NAME` */
    const char *lesson;     /* one line for `demo list` */
    const char *file;       /* the experiment, relative to configs/experiments */
    const char *before;     /* an assignment for both runs (NULL: the file as it is) */
    const char *after;      /* the assignment that makes the "after" run (NULL in a study, or
                               none) */
    const char *after_file; /* the "after" run's experiment, when it is another file (a `jobs:`
                               list of more copies); NULL: `file` */
    const char *vary;       /* a study: "KEY=V1,V2,..." runs once per value (NULL: a pair) */
    const char *explain;    /* one plain sentence: why the figures move */
    /* The effect the lesson claims, before / after epoch time, and why those bounds. A demo with
     * gain bounds 0 claims that "before" does not fit in GPU memory and "after" does. A study
     * claims its gain, the best samples/s of the values that fit over the first value's. */
    double min_gain, max_gain;
    const char *bounds_why;
} sim_demo;

/* One side of a demo: the figures a student compares. */
typedef struct sim_demo_side {
    bool oom;            /* did not fit in GPU memory: no figures, the message says why */
    bool gpu_util_na;    /* on a MIG instance: NVML has no GPU-Util, read SM active */
    char message[512];   /* the verdict sentence, or the out-of-memory message */
    char bottleneck[32]; /* sim_bottleneck_name */
    double samples_per_s, time_s, gpu_util_pct, sm_active_pct, main_busy_pct;
} sim_demo_side;

/* The table, n rows. */
const sim_demo *sim_demo_table(size_t *n);
/* The demo called name, or NULL. */
const sim_demo *sim_demo_find(const char *name);
/* configs/experiments beside a catalog folder (catalog_dir/../experiments), into buf. */
const char *sim_demo_dir(const char *catalog_dir, char *buf, size_t size);
/* Simulates d's before (out[0]) and after (out[1]) runs from experiments_dir with the catalog.
 * Out of memory is a result, not an error; anything else that stops a run (a bad file) is
 * returned with err set. An experiment with a `jobs:` list runs all its jobs at once; the side's
 * figures are its first job's, but GPU-Util and SM active are its GPU's (every job's kernels, as
 * nvidia-smi shows them). */
int sim_demo_run(const sim_demo *d, const char *experiments_dir, const char *catalog_dir,
                 sim_demo_side out[2], sim_err *err);
/* What the "after" run changes, in words (the assignment, or the other file), into buf. */
const char *sim_demo_change(const sim_demo *d, char *buf, size_t size);
/* before / after epoch time (0 when a side did not fit). */
double sim_demo_gain(const sim_demo_side s[2]);

/* The most values a study may vary. */
#define SIM_DEMO_MAX_POINTS 16
/* Simulates the study d (d->vary set: at most SIM_DEMO_MAX_POINTS values) into out[0..*n), one
 * side per value in order; a value that does not fit is an out-of-memory side. Errors as
 * sim_demo_run. */
int sim_demo_study(const sim_demo *d, const char *experiments_dir, const char *catalog_dir,
                   sim_demo_side out[SIM_DEMO_MAX_POINTS], size_t *n, sim_err *err);
/* The largest samples/s of the points that fit over the first point's (0 when the first did not
 * fit). */
double sim_demo_study_gain(const sim_demo_side *s, size_t n);
/* The value of point i of the study d, into buf (the i-th of d->vary's list). */
const char *sim_demo_study_value(const sim_demo *d, size_t i, char *buf, size_t size);

#endif
