/* sweep_merge.h — `epochsim sweep merge`: joins the shard files of one sweep (sweep_shard.h) into
 * the file the whole sweep writes in one process, byte for byte: the CSV header once, then every
 * row in point order. Rows are copied, not rewritten, so nothing can drift in between. */
#ifndef SIM_SWEEP_MERGE_H
#define SIM_SWEEP_MERGE_H

#include "sim/base/err.h"

#include <stddef.h>

/* Merges the n shard files at paths into out (sim/base/outfile.h: whole or nothing; "-" is
 * stdout). Checks before writing anything that the files are shards of one sweep (same shard
 * count, point count, format and grid fingerprint), that each shard is there once (a missing
 * shard is named with the shard count) and complete (its row count as its first line says; a cut
 * file is named), and that every point is in exactly one row. Errors name the file (and line). */
int sim_sweep_merge(const char *out, const char *const *paths, size_t n, sim_err *err);

#endif
