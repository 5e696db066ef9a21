/* outfile.h — output files written whole or not at all: data goes to PATH.tmp.XXXXXX beside
 * PATH and is renamed over PATH only when everything was written. "-" means stdout. */
#ifndef SIM_OUTFILE_H
#define SIM_OUTFILE_H

#include "sim/err.h"

#include <stddef.h>
#include <stdio.h>

typedef struct sim_outfile {
    FILE *fp;
    char path[1024];
    char tmp[1040];
    int is_stdout;
} sim_outfile;

int sim_outfile_open(sim_outfile *o, const char *path, sim_err *err);
/* Creates the empty temp file PATH.tmp.XXXXXX (its name into tmp) with the mode a plain fopen
 * would give (0666 & ~umask) and returns its descriptor, or a negative SIM_E* code. For writers
 * that are not a stdio stream of ours (gnuplot writes its own output); the caller renames the
 * file over PATH or unlinks it. */
int sim_outfile_temp(const char *path, char *tmp, size_t tmp_size, sim_err *err);
/* Flushes, checks for write errors and renames into place; on failure removes the temp file. */
int sim_outfile_commit(sim_outfile *o, sim_err *err);
/* Gives up: removes the temp file. */
void sim_outfile_abort(sim_outfile *o);

#endif
