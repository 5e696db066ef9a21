/* seqlen.h — an experiment's sequence-length histogram (workload.seq_lengths) read and turned into
 * the padded lengths of a step's micro-batches (models/seqmix.h).
 * The file is a CSV with a header row holding the columns `length` (tokens, a whole number from 1,
 * each at most once) and `count` (sequences of that length, a number >= 0); other columns are
 * ignored. docs/sequence-lengths.md describes the format and the padding rules. */
#ifndef CFG_SEQLEN_H
#define CFG_SEQLEN_H

#include "models/seqmix.h"
#include "sim/base/err.h"
#include "sim/setup/experiment.h"

/* Reads path into *count (count[l - 1]: sequences of length l, l = 1 .. *max_len, the longest
 * length with a count above 0; malloc'ed, the caller frees). A bad cell is an error naming the
 * file, its line and the column. Returns 0, SIM_ENOENT/SIM_EIO, SIM_EFORMAT or SIM_ENOMEM. */
int cfg_seq_hist_read(const char *path, double **count, int *max_len, sim_err *err);

/* Reads the histogram at path and plans it (mdl_seq_mix_plan) for a model of seq_len tokens: a
 * longer sequence in the file is an error (see cfg_seq_mix). */
int cfg_seq_mix_file(const char *path, int seq_len, int bin, int align, int batch, int accum_steps,
                     mdl_seq_mix *mix, sim_err *err);

/* The micro-batch lengths of x's step: none (mix->n = 0) when workload.seq_lengths is unset;
 * else the histogram is read and planned for the loader's batch, the accumulation steps, bins
 * and alignment. seq_len is the model's sequence length (its default when workload.seq_len is
 * 0): a histogram with longer sequences is an error (the collator truncates at max_length
 * first, so such a file does not describe what the model is fed). */
int cfg_seq_mix(const sim_experiment *x, int seq_len, mdl_seq_mix *mix, sim_err *err);

#endif
