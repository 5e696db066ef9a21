/* progress.h — a progress line on stderr for long commands: shown only when stderr is a terminal
 * and the work has lasted over a second (a script or a quick run sees nothing), redrawn at most
 * four times a second, erased when the work ends. Wall-clock time only decides whether and when
 * to draw; what is computed never depends on it. */
#ifndef SIM_PROGRESS_H
#define SIM_PROGRESS_H

#include <stdbool.h>

typedef struct sim_progress {
    const char *what; /* "simulating" */
    bool enabled;     /* stderr is a terminal */
    bool shown;       /* a line is on the screen */
    double start_s, last_s;
} sim_progress;

/* Starts the clock; `enabled` is isatty(stderr) && !quiet_requested. */
void sim_progress_begin(sim_progress *p, const char *what, bool quiet_requested);
/* Reports `done` in 0..1; matches the signature of sim_run_opts.progress. */
void sim_progress_update(void *p, double done);
/* Erases the line, if one was drawn. */
void sim_progress_end(sim_progress *p);

#endif
