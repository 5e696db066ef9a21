/* sweep_shard.h — one of N disjoint slices of a sweep, for running a sweep across machines.
 * A point belongs to shard FNV-1a64(point key) mod N, the key being sim_sweep_point_key (the
 * point's settings, not its index), so reordering the sweep file moves no point to another shard.
 * A shard file is a sweep file (same header and rows, in point order) after one line that says
 * which shard it is and of which sweep, for `epochsim sweep merge` (sweep_merge.h):
 *   # epochsim sweep shard 1/4: 250 of 1000 points, csv, grid fnv1a64:0123456789abcdef */
#ifndef SIM_SWEEP_SHARD_H
#define SIM_SWEEP_SHARD_H

#include "sim/app/sweep_row.h"
#include "sim/app/sweep_spec.h"

#include <stdint.h>

/* Shards are counted in int ranges of job arrays; more than a million is a mistake. */
#define SIM_SWEEP_SHARDS_MAX 1000000ULL

/* Shard `index` of `count` (count 0 = the whole sweep, no sharding). */
typedef struct sim_sweep_shard {
    uint64_t index, count;
} sim_sweep_shard;

/* Parses `I/N` (0 <= I < N <= SIM_SWEEP_SHARDS_MAX). On a bad text fills err with the reason
 * (naming the text) and returns SIM_EINVAL. */
int sim_sweep_shard_parse(const char *text, sim_sweep_shard *sh, sim_err *err);

/* The shard a point key belongs to among count. */
uint64_t sim_sweep_shard_of(const char *point_key, uint64_t count);

/* What the first line of a shard file says. */
typedef struct sim_sweep_shard_head {
    sim_sweep_shard shard;
    uint64_t rows;   /* points in this shard */
    uint64_t points; /* points in the whole sweep */
    sim_sweep_format format;
    uint64_t fingerprint; /* of the whole sweep: equal for the shards of one sweep */
} sim_sweep_shard_head;

/* Sorts the points of spec (over base + base_set, written with layout L) into shards: member[i]
 * (spec's point count entries) is set to 1 when point i is in sh, else 0, and head is filled. The
 * fingerprint is FNV-1a64 over the format, the replications, the column names, every key of the
 * base experiment and every point key in index order: shards of two runs agree on it exactly when
 * their full outputs would have the same rows in the same order (for the same epochsim and
 * catalog). Errors: out of memory. */
int sim_sweep_shard_plan(const sim_sweep_spec *spec, const sim_experiment *base,
                         const cfg_experiment_set *base_set, const sim_sweep_layout *L,
                         sim_sweep_shard sh, unsigned char *member, sim_sweep_shard_head *head,
                         sim_err *err);

/* The first line of a shard file (ending in a newline), malloc'd; NULL when out of memory. */
char *sim_sweep_shard_line(const sim_sweep_shard_head *head, size_t *len);

/* Reads a line written by sim_sweep_shard_line (len bytes, without the newline). Returns
 * SIM_EFORMAT when it is not one. */
int sim_sweep_shard_line_parse(const char *line, size_t len, sim_sweep_shard_head *head);

#endif
