/* outfile.h — output files written whole or not at all, and never in a way that replaces what a
 * path names:
 * - a regular file (or a path that does not exist yet) is written to a temporary file beside it,
 *   PATH.tmp.XXXXXX, renamed over PATH only when every write, the flush and the close succeeded;
 *   on failure the temporary file is removed and PATH is left as it was;
 * - a device, FIFO or socket (/dev/null, /dev/stdout, a named pipe) is opened and written in
 *   place: it is never replaced by a regular file;
 * - a symbolic link is followed: its target gets the rule above, the link stays a link (a link
 *   to a missing file is an error);
 * - "-" is standard output.
 * Every write, flush and close is checked. Temporary files are registered with
 * sim_outfile_track, so an interrupted run removes them (see sim_outfile_cleanup). */
#ifndef SIM_OUTFILE_H
#define SIM_OUTFILE_H

#include "sim/base/err.h"

#include <stddef.h>
#include <stdio.h>

#define SIM_OUTFILE_PATH_MAX 1024

typedef struct sim_outfile {
    FILE *fp;
    char path[SIM_OUTFILE_PATH_MAX];     /* where the data ends up (a symbolic link followed) */
    char tmp[SIM_OUTFILE_PATH_MAX + 16]; /* the temporary file beside it; "" = in place */
    int is_stdout;
} sim_outfile;

int sim_outfile_open(sim_outfile *o, const char *path, sim_err *err);
/* Flushes and closes, checking each, and renames the temporary file into place; on failure
 * removes the temporary file and fails with the system's reason. */
int sim_outfile_commit(sim_outfile *o, sim_err *err);
/* Gives up: closes and removes the temporary file (a file written in place keeps what it got). */
void sim_outfile_abort(sim_outfile *o);

/* For writers that are not a stdio stream of ours (gnuplot writes its own output): resolves PATH
 * as sim_outfile_open does, into o->path, and when PATH is to be replaced whole creates the empty
 * temporary file o->tmp (mode 0666 & ~umask, as fopen gives), registered for cleanup. o->fp stays
 * NULL. The writer writes to o->tmp[0] ? o->tmp : o->path, then calls sim_outfile_finish. */
int sim_outfile_prepare(sim_outfile *o, const char *path, sim_err *err);
/* Ends what sim_outfile_prepare began: ok = the writer succeeded. Renames the temporary file into
 * place, or removes it when !ok or the rename fails. */
int sim_outfile_finish(sim_outfile *o, int ok, sim_err *err);

/* Registry of temporary files for interrupts: a path tracked here is removed by
 * sim_outfile_cleanup, which is async-signal-safe (it only calls unlink). At most
 * SIM_OUTFILE_TRACK_MAX at once; beyond that a path is simply not tracked. */
#define SIM_OUTFILE_TRACK_MAX 64
void sim_outfile_track(const char *tmp);
/* mkstemp(tmpl) and sim_outfile_track of the name it made, with SIGINT, SIGTERM and SIGHUP held
 * off in between, so an interrupt never finds the file made but not yet tracked. Returns the
 * descriptor, or -1 with errno set (tmpl is then left as mkstemp left it). */
int sim_outfile_mkstemp(char *tmpl);
void sim_outfile_untrack(const char *tmp);
void sim_outfile_cleanup(void);

/* Flushes and closes standard output at the end of a command; on failure prints
 * "epochsim: error writing standard output: REASON" and returns non-zero. */
int sim_outfile_close_stdout(void);

#endif
