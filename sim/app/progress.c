/* progress.c — the progress line on a terminal (see progress.h). */
#include "sim/app/progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define SHOW_AFTER_S 1.0 /* shorter work stays silent */
#define REDRAW_EVERY_S 0.25

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

void sim_progress_begin(sim_progress *p, const char *what, bool quiet_requested)
{
    p->what = what;
    p->enabled = !quiet_requested && isatty(STDERR_FILENO);
    p->shown = false;
    p->start_s = p->last_s = now_s();
}

void sim_progress_update(void *ctx, double done)
{
    sim_progress *p = ctx;
    if (!p->enabled) return;
    double t = now_s();
    if (t - p->start_s < SHOW_AFTER_S || (p->shown && t - p->last_s < REDRAW_EVERY_S)) return;
    fprintf(stderr, "\r%s %3.0f %%", p->what, 100 * done);
    fflush(stderr);
    p->shown = true;
    p->last_s = t;
}

void sim_progress_end(sim_progress *p)
{
    if (p->shown) fputs("\r\033[K", stderr);
    p->shown = false;
}
