/* sweep_spec.h — what a sweep varies: grid axes, one group of zipped axes and named hardware
 * sets, read from an experiment file's `sweep:` block and from `--sweep`/`--zip` arguments.
 * Points are the product grid x zip x hardware in that order, the last part varying fastest
 * (like Python's itertools.product); a point is a list of `key=value` assignments that are applied
 * to the base experiment with cfg_experiment_apply, so every key behaves as with `run --set`. */
#ifndef SIM_SWEEP_SPEC_H
#define SIM_SWEEP_SPEC_H

#include "sim/setup/config.h"
#include "sim/base/err.h"
#include "sim/setup/experiment.h"

#include <stddef.h>
#include <stdint.h>

#define SIM_SWEEP_KEY_MAX 128
/* Sweeps larger than this are refused: the runner keeps one byte per point. */
#define SIM_SWEEP_MAX_POINTS 100000000ULL

/* One varied key and its values, as the user wrote them (texts, applied per point). */
typedef struct sim_sweep_axis {
    char key[SIM_SWEEP_KEY_MAX];
    char **values;
    size_t n;
    int line, col; /* where the list starts in the file (1-based); 0 = command line */
} sim_sweep_axis;

/* A named hardware set: `name` plus assignments (`key=value` texts). */
typedef struct sim_sweep_hwset {
    char *name;
    char **assign;
    size_t n;
} sim_sweep_hwset;

typedef struct sim_sweep_spec {
    sim_sweep_axis *grid; /* in file order, then --sweep order */
    size_t n_grid;
    sim_sweep_axis *zip; /* all of equal length, varied together */
    size_t n_zip;
    sim_sweep_hwset *hw;
    size_t n_hw;
} sim_sweep_spec;

/* A point: its index and, per swept column (sim_sweep_spec_column), the value text. Borrowed from
 * the spec; valid while the spec lives. */
typedef struct sim_sweep_point {
    uint64_t index;
    const char **values;       /* n_columns entries */
    const sim_sweep_hwset *hw; /* NULL when the sweep has no hardware sets */
} sim_sweep_point;

void sim_sweep_spec_init(sim_sweep_spec *s);
void sim_sweep_spec_free(sim_sweep_spec *s);

/* Reads the `sweep:` block of experiment file PATH (a file without one adds nothing). Errors
 * (unknown keys, zip lengths that differ, values that are not lists) name PATH:line:col. */
int sim_sweep_spec_load(sim_sweep_spec *s, const char *path, sim_err *err);

/* Loads the experiment part of PATH (everything but `sweep:`) on top of x, like
 * cfg_experiment_load. */
int sim_sweep_load_experiment(const char *path, sim_experiment *x, cfg_experiment_set *set,
                              sim_err *err);

/* Adds `KEY=V1,V2,...` from the command line: a grid axis (zip = 0; it replaces a grid axis of
 * the same key from the file) or a zipped axis (zip = 1). Errors name the argument. */
int sim_sweep_spec_add(sim_sweep_spec *s, const char *arg, int zip, sim_err *err);

/* Cross checks after everything was added: equal zip lengths, no key varied twice. */
int sim_sweep_spec_check(const sim_sweep_spec *s, sim_err *err);

/* Number of points (1 for an empty spec: the base experiment alone). */
uint64_t sim_sweep_spec_points(const sim_sweep_spec *s);

/* Swept columns: grid keys, zip keys, then "hardware" when there are hardware sets. */
size_t sim_sweep_spec_columns(const sim_sweep_spec *s);
const char *sim_sweep_spec_column(const sim_sweep_spec *s, size_t i);

/* Fills p for point `index` (< sim_sweep_spec_points); p->values must hold
 * sim_sweep_spec_columns entries. */
void sim_sweep_spec_point(const sim_sweep_spec *s, uint64_t index, sim_sweep_point *p,
                          const char **values);

/* Applies the point's assignments to x (and marks them in set) and sets x->seed to the point's
 * seed (see sim_sweep_seed). On a bad value returns SIM_EINVAL with the reason in err; *seed_out
 * still gets the seed so that an error row carries it. */
int sim_sweep_point_apply(const sim_sweep_spec *s, const sim_sweep_point *p, sim_experiment *x,
                          cfg_experiment_set *set, uint64_t *seed_out, sim_err *err);

/* FNV-1a 64 (Fowler, Noll, Vo; draft-eastlake-fnv): h = (h ^ byte) * 0x100000001b3 over the bytes
 * of s, starting from h (SIM_SWEEP_FNV_BASIS for a fresh hash; a previous result to go on). */
#define SIM_SWEEP_FNV_BASIS 0xcbf29ce484222325ULL
uint64_t sim_sweep_fnv1a(const char *s, uint64_t h);

/* The identity of a point, independent of its index and of the order of the sweep file: its
 * assignments applied to a scratch copy of base, each as `key=value` with the value as the config
 * table prints it (a value that does not apply stays as written), plus `hardware=NAME` when the
 * point has a hardware set, sorted by key and joined with ';' —
 * `loader.batch_size=64;system.gpu=a10`. malloc'd; NULL when out of memory. */
char *sim_sweep_point_key(const sim_sweep_spec *s, const sim_sweep_point *p,
                          const sim_experiment *base, const cfg_experiment_set *base_set);

/* splitmix64 step (Steele, Lea, Flood 2014; the finalizer of java.util.SplittableRandom). */
uint64_t sim_sweep_mix(uint64_t z);

/* The seed of a point: splitmix64 of the base seed and of the point's assignments in canonical
 * form (`key=value` as the config table prints the parsed value, order-independent), kept to 53
 * bits so that JSON readers hold it exactly. It does not depend on the point's index, so adding
 * values to a sweep leaves the other points' seeds alone. `assign_hash` comes from the assignments.
 */
uint64_t sim_sweep_seed(uint64_t base_seed, uint64_t assign_hash);

/* Seed of replication r (0-based) of a point: r = 0 is the point seed itself. */
uint64_t sim_sweep_replication_seed(uint64_t point_seed, int r);

#endif
