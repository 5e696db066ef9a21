/* plt_gnuplot.h — drawing through a gnuplot process (popen): the caller writes a script with
 * inline data blocks to the pipe; the output follows sim/base/outfile.h's rules (a regular file is
 * replaced only when gnuplot exits 0, so a failed plot leaves no file behind; a device or FIFO is
 * written in place). */
#ifndef PLT_GNUPLOT_H
#define PLT_GNUPLOT_H

#include "sim/base/err.h"
#include "sim/base/outfile.h"

#include <signal.h>
#include <stdio.h>

typedef enum plt_term { PLT_TERM_PNG, PLT_TERM_SVG, PLT_TERM_DUMB } plt_term;

typedef struct plt_gnuplot {
    FILE *fp; /* write the script here */
    plt_term term;
    int has_out;     /* output to a file (out), not stdout */
    sim_outfile out; /* prepared, not opened: gnuplot writes the file itself */
    struct sigaction old_pipe;
} plt_gnuplot;

/* The terminal for a name: "png", "svg", "dumb"; 0 or SIM_EUSAGE. */
int plt_term_parse(const char *name, plt_term *t, sim_err *err);
/* The terminal a file name asks for (.png or .svg); 0 or SIM_EUSAGE. */
int plt_term_from_path(const char *path, plt_term *t, sim_err *err);
/* Finds gnuplot on PATH: 0, or SIM_ENOENT with "gnuplot not found: install the Debian package
 * gnuplot-nox". */
int plt_gnuplot_check(sim_err *err);
/* Starts gnuplot with terminal `term` of width x height pixels (dumb: characters; 0 = a
 * default) writing to `path` (NULL or "-": stdout, for dumb). */
int plt_gnuplot_open(plt_gnuplot *g, plt_term term, const char *path, int width, int height,
                     sim_err *err);
/* Ends the script, waits for gnuplot, and puts the file in place when it exited 0. */
int plt_gnuplot_close(plt_gnuplot *g, sim_err *err);
/* Writes s as a gnuplot single-quoted string (quotes doubled). */
void plt_quote(FILE *fp, const char *s);

#endif
