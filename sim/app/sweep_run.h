/* sweep_run.h — running a sweep: every point on a pool of threads, rows written in point order
 * (so -j N output is byte for byte that of -j 1), each row with one write() to an O_APPEND file,
 * fsync'd at most once a second and at the end. --resume reads a file left by an interrupted run,
 * drops a cut last line, checks the header and each row's point, seed and swept values, and runs
 * only the missing points; since rows are always written in point order, the file it leaves is
 * the file a clean run writes. With a shard (sweep_shard.h) the same holds for the shard's points
 * and its file. */
#ifndef SIM_SWEEP_RUN_H
#define SIM_SWEEP_RUN_H

#include "sim/setup/config.h"
#include "sim/base/err.h"
#include "sim/app/sweep_row.h"
#include "sim/app/sweep_shard.h"
#include "sim/app/sweep_spec.h"

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct sim_sweep_opts {
    const char *out_path; /* NULL or "-" = stdout (no resume) */
    sim_sweep_format format;
    int threads;      /* worker threads, >= 1 */
    int replications; /* runs per point, >= 1 */
    bool resume;      /* finish an existing file (a missing one is started) */
    bool force;       /* overwrite an existing file instead of refusing */
    bool progress;    /* a progress bar with ETA on stderr */
    /* Run only this shard's points (count 0: all); the file starts with the shard line. */
    sim_sweep_shard shard;
    const char *catalog_dir;
    /* Set to non-zero (by a signal handler) to stop: no new points start, points in flight
     * finish, rows written so far stay whole. May be NULL. */
    volatile sig_atomic_t *stop;
} sim_sweep_opts;

typedef struct sim_sweep_stats {
    uint64_t points;  /* in the sweep (in the shard, when sharded) */
    uint64_t skipped; /* already in the file (--resume) */
    uint64_t written; /* rows written by this run */
    uint64_t failed;  /* rows with an error */
    uint64_t oom;     /* rows with oom = 1 */
    uint64_t events;  /* engine events, all points and replications */
    double wall_s;
    bool interrupted; /* stopped before every point was written */
} sim_sweep_stats;

/* Runs the sweep of base (+ base_set, the keys the file and --set gave) over spec. Returns 0 when
 * the output is complete or stopped cleanly (see st); a point that fails is a row, not an error.
 * Errors: an output file that exists (without resume/force), a resume file that belongs to another
 * sweep (SIM_EFORMAT, with file:line), write errors. */
int sim_sweep_run(const sim_sweep_spec *spec, const sim_experiment *base,
                  const cfg_experiment_set *base_set, const sim_sweep_opts *o, sim_sweep_stats *st,
                  sim_err *err);

/* Reads the rest of fd into *data (malloc'd, with a NUL after the *len bytes). Returns -1 with
 * errno set on a read error or when out of memory. */
int sim_sweep_read_fd(int fd, char **data, size_t *len);

#endif
